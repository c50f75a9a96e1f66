package httpapi

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/dashboard"
)

// dashboardFiles are the pages, rendered from their templates by go generate (see
// package dashboard), and their assets: both are served as they are.
var dashboardFiles = dashboard.Files()

// pageSecurity is what every page and asset is sent with: nothing may load from, or
// connect to, another origin; no other site may frame a page (clickjacking); nothing
// is sniffed or cached stale.
var pageSecurity = map[string]string{
	"Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Frame-Options":        "DENY",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-cache",
}

// page serves an embedded HTML page; nothing in one changes per request.
func (a *API) page(name string) gin.HandlerFunc {
	return func(c *gin.Context) { a.serveFile(c, name) }
}

// asset serves an embedded script, style sheet or image.
func (a *API) asset(c *gin.Context) {
	name := c.Param("file")
	if strings.HasSuffix(name, ".html") {
		name = "" // pages have their own paths
	}
	a.serveFile(c, name)
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

func (a *API) serveFile(c *gin.Context, name string) {
	ct, known := contentTypes[path.Ext(name)]
	var b []byte
	var err error
	if known && fs.ValidPath(name) {
		b, err = fs.ReadFile(dashboardFiles, name)
	}
	if !known || b == nil || err != nil {
		a.renderError(c, apperr.New(apperr.NotFound, "no dashboard file "+name))
		return
	}
	h := c.Writer.Header()
	for k, v := range pageSecurity {
		h.Set(k, v)
	}
	h.Set("Content-Type", ct)
	c.Status(http.StatusOK)
	c.Writer.Write(b)
}
