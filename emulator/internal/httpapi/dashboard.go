package httpapi

import (
	"bytes"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/dashboard"
)

var dashboardFiles = dashboard.Files()

// renderedPages are the HTML pages, rendered once on first use: each starts with the
// shared "top" template (layout.html: head, navigation, token dialog) filled with its
// title and which link is the current page; nothing in them changes per request.
var renderedPages = sync.OnceValue(func() map[string][]byte {
	t := template.Must(template.ParseFS(dashboardFiles, "*.html"))
	out := map[string][]byte{}
	for name, data := range map[string]struct{ Title, Page string }{
		"index.html":     {Title: "hostemu", Page: "home"},
		"dashboard.html": {Title: "Dashboard", Page: "dashboard"},
		"tokens.html":    {Title: "Tokens", Page: "tokens"},
	} {
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, name, data); err != nil {
			panic(err) // the pages are embedded: a test renders every one
		}
		out[name] = buf.Bytes()
	}
	return out
})

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

// page serves an embedded HTML page.
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
	if page, ok := renderedPages()[name]; ok {
		b = page
	} else if known && path.Ext(name) != ".html" && fs.ValidPath(name) {
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
