package edge

import (
	"net/http"
	"strings"
)

// Options configure a Handler. Lookup is required; the zero value of every other field works.
type Options struct {
	// Lookup answers what the world holds; required.
	Lookup Lookup
	// Files holds uploaded contents; nil serves every file as a placeholder.
	Files *FileStore
	// EdgeDomain is the domain deployment hosts live under; "" means DefaultEdgeDomain.
	EdgeDomain string
	// DocsBase returns the base URL of hostemu's docs for a request, such as
	// "http://127.0.0.1:4700": an error's doc_url is DocsBase(r) + "/docs/errors/<code>".
	// It must not be the request's own host, which is the edge's. nil leaves doc_url
	// relative ("/docs/errors/<code>").
	DocsBase func(r *http.Request) string
}

// Handler is the edge as an http.Handler. Decide and Serve split ServeHTTP for a router
// that must know whether the edge claims a request before giving it to the APIs, without
// reading the world twice.
type Handler struct {
	lookup     Lookup
	files      *FileStore
	edgeDomain string
	docsBase   func(r *http.Request) string
}

// New returns the edge handler of o.
func New(o Options) *Handler {
	if o.EdgeDomain == "" {
		o.EdgeDomain = DefaultEdgeDomain
	}
	return &Handler{lookup: o.Lookup, files: o.Files, edgeDomain: NormalizeHost(o.EdgeDomain), docsBase: o.DocsBase}
}

// EdgeDomain returns the normalised domain deployment hosts live under.
func (h *Handler) EdgeDomain() string { return h.edgeDomain }

// Decide reads r's host and routes it, reading the world once.
func (h *Handler) Decide(r *http.Request) Decision {
	host, proxy := RequestHost(r)
	return decide(host, proxy, h.lookup, h.edgeDomain)
}

// ServeHTTP answers r as the edge: Serve(w, r, Decide(r)).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.Serve(w, r, h.Decide(r))
}

// Static header values, shared: net/http only reads them.
var (
	serverHeader      = []string{"hostemu"}
	retryAfterHeader  = []string{"1"}
	placeholderHeader = []string{"true"}
	allowHeader       = []string{"GET, HEAD"}
)

// Serve writes the edge's answer to r as d decided it. Every answer carries
// Server: hostemu, and X-Hostemu-Deployment when a deployment answered (its files, its
// building or failed page, or a path it lacks).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, d Decision) {
	hd := w.Header()
	hd["Server"] = serverHeader
	if d.Action == ActionServe {
		h.serveFile(w, r, d) // sets X-Hostemu-Deployment with its other headers
		return
	}
	if d.Deployment.ID != "" {
		hd["X-Hostemu-Deployment"] = []string{d.Deployment.ID}
	}
	switch d.Action {
	case ActionRedirect:
		h.redirect(w, r, d.RedirectTo)
	default:
		if d.Code == CodeDeploymentBuilding {
			hd["Retry-After"] = retryAfterHeader
		}
		h.fail(w, r, d, d.Code)
	}
}

// Error answers an edge error with any status and code, as the edge's own errors are
// answered (an injected fault's, say): HTML, or the envelope when JSON is preferred.
func (h *Handler) Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header()["Server"] = serverHeader
	writeError(w, r, status, code, msg, h.docURL(r, code))
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, d Decision, code string) {
	writeError(w, r, Status(code, d.Proxy), code, message(code, d), h.docURL(r, code))
}

func (h *Handler) docURL(r *http.Request, code string) string {
	base := ""
	if h.docsBase != nil {
		base = strings.TrimRight(h.docsBase(r), "/")
	}
	return base + "/docs/errors/" + code
}

// redirect answers 308 to https://<to><path>?<query>, path and query exactly as sent.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, to string) {
	target := "https://" + to + requestPath(r)
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header()["Location"] = []string{target}
	w.WriteHeader(http.StatusPermanentRedirect)
}

// requestPath returns the path of r's target as the client wrote it, not re-encoded;
// "/" when it has none.
func requestPath(r *http.Request) string {
	uri := r.RequestURI
	if isAbsoluteForm(uri) {
		_, rest, _ := strings.Cut(uri, "://")
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			uri = rest[i:]
		} else {
			uri = "/"
		}
	}
	if !strings.HasPrefix(uri, "/") {
		uri = r.URL.EscapedPath() // a request not read by a server, or "*"
	}
	uri, _, _ = strings.Cut(uri, "?")
	if uri == "" {
		return "/"
	}
	return uri
}
