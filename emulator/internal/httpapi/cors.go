package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// exposedHeaders are the response headers a page's script may read.
const exposedHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"

// cors adds the CORS headers of the public APIs to their responses; preflights are
// answered by preflight. The control API and docs get none (see controlGuard).
func (a *API) cors() gin.HandlerFunc {
	return func(c *gin.Context) {
		if isControl(c.Request.URL.Path) {
			c.Next()
			return
		}
		if allow := a.allowOrigin(c.Request.Header.Get("Origin")); allow != "" {
			h := c.Writer.Header()
			a.setAllowOrigin(h, allow)
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
		}
		c.Next()
	}
}

// allowOrigin is the Access-Control-Allow-Origin value for origin: "*" when any origin
// may call, the origin itself when --cors-origins lists it, else "".
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

// setAllowOrigin writes the origin headers: an echoed origin also allows credentials
// (cookies, Authorization with credentials: "include") and varies the answer by Origin.
func (a *API) setAllowOrigin(h http.Header, allow string) {
	h.Set("Access-Control-Allow-Origin", allow)
	if allow != "*" {
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
	}
}

// preflight answers a CORS preflight of a public route: not authenticated, not counted.
// Every requested header is allowed (front-end stacks add X-Requested-With, traceparent,
// sentry-trace, baggage, Idempotency-Key…), so the answer echoes the request's list.
func (a *API) preflight(c *gin.Context) {
	h := c.Writer.Header()
	if allow := a.allowOrigin(c.Request.Header.Get("Origin")); allow != "" {
		a.setAllowOrigin(h, allow)
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		if req := c.Request.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
			h.Add("Vary", "Access-Control-Request-Headers")
		} else {
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-File-Digest")
		}
		h.Set("Access-Control-Max-Age", "600")
	}
	c.AbortWithStatus(http.StatusNoContent)
}
