package httpapi

import (
	"net/http"
	"strings"
)

// CORS, one implementation for every kind of request: the public APIs allow the origins
// of --cors-origins (every origin by default); the control API and the dashboard allow
// only --control-origins (see guardControl). A preflight is answered the same way for
// both, from the origin the policy allows.

// exposedHeaders are the response headers a page's script may read.
const exposedHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"

// corsHeaders adds the public APIs' CORS headers to an answer.
func (a *API) corsHeaders(h http.Header, r *http.Request) {
	if allow := a.allowOrigin(headerOf(r.Header, "Origin")); allow != "" {
		setAllowOrigin(h, allow)
		h.Set("Access-Control-Expose-Headers", exposedHeaders)
	}
}

// allowOrigin is the public APIs' Access-Control-Allow-Origin for origin: the origin
// itself when --cors-origins is "*" or lists it, else "". Echoing rather than sending
// "*" lets a browser app send credentials (fetch's credentials: "include", axios'
// withCredentials), which "*" forbids; the public API sets no cookies, so this costs
// nothing.
func (a *API) allowOrigin(origin string) string {
	if origin == "" {
		return ""
	}
	for _, o := range a.cfg.CORSOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return origin
		}
	}
	return ""
}

// setAllowOrigin writes the origin headers: the echoed origin, credentials allowed, and
// the answer varies by Origin.
func setAllowOrigin(h http.Header, allow string) {
	h.Set("Access-Control-Allow-Origin", allow)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Add("Vary", "Origin")
}

// preflightOf reports whether r is a CORS preflight (any OPTIONS request is answered
// as one).
func preflightOf(r *http.Request) bool { return r.Method == http.MethodOptions }

// preflight answers a CORS preflight with 204: with the CORS headers when allow (the
// origin the policy allows) is not empty. Not authenticated, not counted, not
// journaled. Every requested header is allowed (front-end stacks add X-Requested-With,
// traceparent, sentry-trace, baggage, Idempotency-Key…), so the answer echoes the
// request's list. It answers on every path of the public APIs, a route or not, so that
// the real request's error (a 404 for a typo in a path) reaches the app instead of a
// failed preflight.
func preflight(ex *exchange, r *http.Request, allow string) {
	h := ex.Header()
	if allow != "" {
		setAllowOrigin(h, allow)
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
			h.Add("Vary", "Access-Control-Request-Headers")
		} else {
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-File-Digest")
		}
		h.Set("Access-Control-Max-Age", "600")
	}
	ex.WriteHeader(http.StatusNoContent)
}
