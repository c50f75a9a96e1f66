package httpapi

import (
	"net/http"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/edge"
)

// guardControl keeps web pages away from the control API (and the dashboard's pages):
// it can reset the world, mint admin tokens and read every request, and it runs beside
// the developer's browser. It is the control kinds' policy in the pipeline.
//
//   - While hostemu listens on loopback only, a control request must name localhost, a
//     loopback address or --public-url's host (see controlHost): a DNS-rebinding page
//     (a foreign name resolving to 127.0.0.1) is refused with forbidden_host, and so is
//     any *.localhost name, which the edge serves pages on.
//   - A request from a page of another origin is refused with forbidden_origin: its
//     Origin is not the emulator's own (see ownOrigin) nor one of --control-origins, or,
//     without an Origin (a no-cors GET), the browser's Sec-Fetch-Site says it comes
//     from another site. Listed origins get CORS headers and their preflights answered.
//
// The dashboard's pages are guarded the same way, with one exception: a page may be
// opened by a top-level navigation from another site (a link in a README, in your
// app). A page holds no state, and what it shows it reads with same-origin calls to the
// control API, which the rules above keep to this origin.
//
// It reports answered when it answered a listed origin's preflight itself.
func (a *API) guardControl(ex *exchange, r *http.Request) (answered bool, err error) {
	if a.cfg.CheckHost && !a.controlHost(edge.NormalizeHost(r.Host)) {
		return false, apperr.Errorf(apperr.ForbiddenHost, "the control API answers only to localhost, a loopback address or --public-url's host while it listens on loopback, not %q", r.Host)
	}
	origin := r.Header.Get("Origin")
	switch {
	case origin != "" && a.listedControlOrigin(origin):
		if preflightOf(r) {
			preflight(ex, r, origin)
			return true, nil
		}
		setAllowOrigin(ex.Header(), origin)
	case origin != "" && !a.ownOrigin(r, origin):
		return false, apperr.Errorf(apperr.ForbiddenOrigin, "the control API refuses requests from the web origin %q; list it with --control-origins to allow it", origin)
	case origin == "" && crossSite(r.Header.Get("Sec-Fetch-Site")) && !(ex.class.Kind == KindPage && navigation(r)):
		return false, apperr.New(apperr.ForbiddenOrigin, "the control API refuses requests from a page of another site")
	}
	return false, nil
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
