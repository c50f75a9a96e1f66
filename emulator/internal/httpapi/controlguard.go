package httpapi

import (
	"net"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// controlGuard keeps web pages away from the control API: it can reset the world,
// mint admin tokens and read every request, and it runs beside the developer's browser.
//
//   - While hostemu listens on loopback only, a control request must name a loopback
//     host or --public-url's host: a DNS-rebinding page (a foreign name resolving to
//     127.0.0.1) is refused with forbidden_host.
//   - A request from a page of another origin is refused with forbidden_origin: its
//     Origin header is not the emulator's own origin nor one of --control-origins, or,
//     without an Origin (a no-cors GET), the browser's Sec-Fetch-Site says it comes from
//     another site. Listed origins get CORS headers and their preflights answered.
//
// The dashboard's pages and assets are guarded the same way, with one exception: a
// page may be opened by a top-level navigation from another site (a link in a README,
// in your app). A page holds no state, and what it shows it reads with same-origin
// calls to the control API, which the rules above keep to this origin.
func (a *API) controlGuard() gin.HandlerFunc {
	return func(c *gin.Context) {
		dash := isDashboard(c.Request.URL.Path)
		if !dash && !isControlAPI(c.Request.URL.Path) {
			c.Next()
			return
		}
		if a.cfg.CheckHost && !a.controlHost(c.Request.Host) {
			a.renderError(c, apperr.Errorf(apperr.ForbiddenHost, "the control API answers only to a loopback host or --public-url's host while it listens on loopback, not %q", c.Request.Host))
			return
		}
		origin := c.Request.Header.Get("Origin")
		listed := origin != "" && a.listedControlOrigin(origin)
		switch {
		case listed:
			h := c.Writer.Header()
			a.setAllowOrigin(h, origin)
			if c.Request.Method == http.MethodOptions {
				h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
				if req := c.Request.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				}
				h.Set("Access-Control-Max-Age", "600")
				c.AbortWithStatus(http.StatusNoContent)
				return
			}
		case origin != "" && !a.ownOrigin(c, origin):
			a.renderError(c, apperr.Errorf(apperr.ForbiddenOrigin, "the control API refuses requests from the web origin %q; list it with --control-origins to allow it", origin))
			return
		case origin == "" && crossSite(c.Request.Header.Get("Sec-Fetch-Site")) && !(dash && navigation(c.Request)):
			a.renderError(c, apperr.New(apperr.ForbiddenOrigin, "the control API refuses requests from a page of another site"))
			return
		}
		c.Next()
	}
}

// isControlAPI reports whether path is the control API (the docs are public).
func isControlAPI(path string) bool {
	return path == "/_emulator" || strings.HasPrefix(path, "/_emulator/")
}

// crossSite reports whether a Sec-Fetch-Site value says another site or origin sent
// the request; "same-origin", "none" (typed or bookmarked) and no header (not a
// browser) pass.
func crossSite(v string) bool { return v == "cross-site" || v == "same-site" }

// navigation reports whether a browser sent r to open a page in a window or tab (not in
// a frame, not as a script or a fetch).
func navigation(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}

func (a *API) listedControlOrigin(origin string) bool {
	for _, o := range a.cfg.ControlOrigins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// ownOrigin reports whether origin is the emulator's own: the origin of the URL the
// request was made to, or of --public-url.
func (a *API) ownOrigin(c *gin.Context, origin string) bool {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+c.Request.Host) ||
		(a.publicOrigin != "" && strings.EqualFold(origin, a.publicOrigin))
}

// controlHost reports whether a Host header names a loopback host or --public-url's.
func (a *API) controlHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	case host == "":
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return a.publicHost != "" && host == a.publicHost
}
