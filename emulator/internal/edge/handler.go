package edge

import (
	"net/http"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
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
	// RedirectForm is the scheme and port of a domain's 308 to its redirect_to, for r:
	// the port the client used, so that the redirect opens as the request did. nil:
	// https, no port.
	RedirectForm func(r *http.Request) state.URLForm
}

// Handler is the edge as an http.Handler. Decide and Serve split ServeHTTP for a router
// that must know whether the edge claims a request before giving it to the APIs, without
// reading the world twice.
type Handler struct {
	lookup     Lookup
	files      *FileStore
	edgeDomain string
	docsBase   func(r *http.Request) string
	redirectTo func(r *http.Request) state.URLForm
}

// New returns the edge handler of o.
func New(o Options) *Handler {
	if o.EdgeDomain == "" {
		o.EdgeDomain = DefaultEdgeDomain
	}
	return &Handler{lookup: o.Lookup, files: o.Files, edgeDomain: NormalizeHost(o.EdgeDomain), docsBase: o.DocsBase, redirectTo: o.RedirectForm}
}

// EdgeDomain returns the normalised domain deployment hosts live under.
func (h *Handler) EdgeDomain() string { return h.edgeDomain }

// Decide reads r's host and routes it, reading the world once.
func (h *Handler) Decide(r *http.Request) Decision {
	host, proxy := RequestHost(r)
	return decide(host, proxy, h.lookup, h.edgeDomain)
}

// ServeHTTP answers r as the edge on its own (tests, benchmarks): Serve(w, r, Decide(r)),
// with its errors written by WriteError. hostemu's front door calls Serve, and writes
// the errors itself.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := h.Decide(r)
	if err := h.Serve(w, r, d); err != nil {
		w.Header()["Server"] = serverHeader
		WriteError(w, r, Status(string(err.Code), d.Proxy), string(err.Code), err.Message, h.docURL(r, string(err.Code)))
	}
}

// Static header values, shared: net/http only reads them.
var (
	serverHeader      = []string{"hostemu"}
	retryAfterHeader  = []string{"1"}
	placeholderHeader = []string{"true"}
	allowHeader       = []string{"GET, HEAD"}
)

// Serve answers r as d decided it: a deployment's files or a redirect; or, for an error
// (d's, or a path or method the deployment does not serve), it sets the error's headers
// (Server, X-Hostemu-Deployment, Retry-After, Allow) and returns it for the caller to
// write. Every answer carries Server: hostemu, and X-Hostemu-Deployment when a
// deployment answered (its files, its building or failed page, or a path it lacks).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, d Decision) *apperr.Error {
	hd := w.Header()
	hd["Server"] = serverHeader
	if d.Action == ActionServe {
		return h.serveFile(w, r, d) // sets X-Hostemu-Deployment with its other headers
	}
	if d.Deployment.ID != "" {
		hd["X-Hostemu-Deployment"] = []string{d.Deployment.ID}
	}
	if d.Action == ActionRedirect {
		h.redirect(w, r, d.RedirectTo)
		return nil
	}
	if d.Code == CodeDeploymentBuilding {
		hd["Retry-After"] = retryAfterHeader
	}
	return failure(d.Code, d)
}

func (h *Handler) docURL(r *http.Request, code string) string {
	base := ""
	if h.docsBase != nil {
		base = strings.TrimRight(h.docsBase(r), "/")
	}
	return base + "/docs/errors/" + code
}

// redirect answers 308 to https://<to>[:port]<path>?<query>, path and query exactly as
// sent, scheme and port as Options.RedirectForm says.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, to string) {
	var form state.URLForm
	if h.redirectTo != nil {
		form = h.redirectTo(r)
	}
	target := form.URL(to) + requestPath(r)
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
