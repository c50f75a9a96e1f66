package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// cors adds the CORS headers to every response; preflights are answered by preflight.
func (a *API) cors() gin.HandlerFunc {
	return func(c *gin.Context) {
		origin := c.Request.Header.Get("Origin")
		if allow := a.allowOrigin(origin); allow != "" {
			h := c.Writer.Header()
			h.Set("Access-Control-Allow-Origin", allow)
			if allow != "*" {
				h.Add("Vary", "Origin")
			}
			h.Set("Access-Control-Expose-Headers", "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After")
		}
		c.Next()
	}
}

func (a *API) allowOrigin(origin string) string {
	if origin == "" {
		return ""
	}
	for _, o := range a.cfg.CORSOrigins {
		if o == "*" {
			return "*"
		}
		if strings.EqualFold(o, origin) {
			return origin
		}
	}
	return ""
}

// preflight answers a CORS preflight: not authenticated, not counted.
func (a *API) preflight(c *gin.Context) {
	h := c.Writer.Header()
	if a.allowOrigin(c.Request.Header.Get("Origin")) != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-File-Digest")
		h.Set("Access-Control-Max-Age", "600")
	}
	c.AbortWithStatus(http.StatusNoContent)
}
