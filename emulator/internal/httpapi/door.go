package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// The front door: every request hostemu answers, on every listener and through every
// CONNECT tunnel, is classified here once, from the listener, the method, the host and
// the path, and then handed to the one pipeline (pipeline.go) with that decision. No
// later step asks again what a request is.

// Kind is what the front door decided a request is.
type Kind uint8

// Kinds of request.
const (
	// KindNotFound is a request no service owns (a path outside every prefix, or a
	// service not served on this listener): 404 not_found, through the public pipeline.
	KindNotFound Kind = iota
	// KindHosting is the hosting service: /v1/… except the decryption routes.
	KindHosting
	// KindCipher is the decryption service: /v1/encrypt and /v1/decrypt, and any path
	// that names them in another spelling (the journal redacts its body).
	KindCipher
	// KindHealth is GET /_emulator/health: the control API's one route without a token.
	KindHealth
	// KindControl is the control API: /_emulator/….
	KindControl
	// KindPage is a dashboard page or asset: /, /dashboard, /account/tokens,
	// /dashboard/assets/….
	KindPage
	// KindDocs is the public docs: /docs, /docs/errors, /docs/errors/{code}, and the
	// OpenAPI description, /openapi.json and /openapi.yaml.
	KindDocs
	// KindEdge is a deployment host or custom domain, or an absolute-form proxy request
	// for a host that is not hostemu's own.
	KindEdge
	// KindTunnel is CONNECT host:port: a tunnel to hostemu itself.
	KindTunnel
)

var kindNames = [...]string{"not_found", "hosting", "cipher", "health", "control", "page", "docs", "edge", "tunnel"}

func (k Kind) String() string { return kindNames[k] }

// service is the journal's and the faults' name of the service a kind belongs to.
func (k Kind) service() string {
	switch k {
	case KindCipher:
		return serviceCipher
	case KindEdge, KindTunnel:
		return serviceEdge
	}
	return serviceHosting
}

// public reports whether requests of the kind are the emulated services' own: counted
// against rate limits, faulted, journaled, with the public CORS rules.
func (k Kind) public() bool { return k == KindNotFound || k == KindHosting || k == KindCipher }

// Services a request can belong to.
const (
	serviceHosting = "hosting"
	serviceCipher  = "cipher"
	serviceEdge    = "edge"
)

// Listener is which of hostemu's listeners a front door serves.
type Listener uint8

// Listeners.
const (
	// ListenerMain is --addr (and its HTTPS twin, and CONNECT tunnels): the hosting
	// service, the edge and the proxy, and the decryption service and the control API
	// unless they have listeners of their own.
	ListenerMain Listener = iota
	// ListenerCipher is --cipher-addr: the decryption service, health and the docs.
	ListenerCipher
	// ListenerControl is --control-addr: the control API, the dashboard and the docs.
	ListenerControl
)

// Class is the front door's decision about one request.
type Class struct {
	Kind Kind
	// Host is the request's host, normalised (edge.NormalizeHost): the Host header's, or
	// an absolute-form request's URL's.
	Host string
	// Proxy is true for an absolute-form (proxy) request.
	Proxy bool
	// World is the world an edge request or a tunnel belongs to (nil for the APIs,
	// whose world the credential names, see identify).
	World *world.World
	// Path is the request's path as the router reads its segments (routePath): what
	// faults, the journal and coverage match, so that none of them takes
	// dpl_x%2Fpromote for the promote route the router does not take it for. An edge
	// request's is its decoded path, the one the edge serves files by.
	Path string
	// Edge is the edge's decision for KindEdge.
	Edge edge.Decision
	// MissingNamespace is the namespace an edge request or a tunnel named (by
	// X-Hostemu-Namespace or proxy credentials) that does not exist: it is refused with
	// namespace_not_found (World is then the default one, for the journal).
	MissingNamespace string
	// Secret says the body may be a secret the journal must not keep: an /v1/encrypt
	// payload, or whatever is sent to a path that names encrypt or decrypt without being
	// /v1/decrypt (whose envelope is no secret).
	Secret bool
}

// door is the front door of one listener: an http.Handler that classifies each request
// and serves it through the pipeline.
type door struct {
	a        *API
	listener Listener
}

func (d door) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.a.serve(w, r, d.listener) }

// Classify decides what r, arriving on listener l, is. It reads the world at most once
// (the edge's routes) and allocates nothing for a request to the APIs.
func (a *API) Classify(r *http.Request, l Listener) Class {
	if r.Method == http.MethodConnect {
		if l != ListenerMain {
			return Class{Kind: KindNotFound}
		}
		host := edge.NormalizeHost(r.Host)
		wd, missing := a.edgeWorld(r, host)
		return Class{Kind: KindTunnel, Host: host, Proxy: true, World: wd, MissingNamespace: missing, Path: r.URL.Path}
	}
	host, proxy := edge.RequestHost(r)
	if l == ListenerMain && (!a.ownHost(host) || (proxy && !a.ownProxyTarget(r, host))) {
		wd, missing := a.edgeWorld(r, host)
		if missing != "" {
			d := edge.Decision{Action: edge.ActionError, Claimed: true, Host: host, Proxy: proxy, Code: edge.CodeNamespaceNotFound, Namespace: missing}
			return Class{Kind: KindEdge, Host: host, Proxy: proxy, World: wd, Edge: d, MissingNamespace: missing, Path: r.URL.Path}
		}
		if d := edge.Decide(host, proxy, wd.Edge(), wd.EdgeDomain()); d.Claimed {
			if proxy && !a.proxyVouches(d) {
				d = refusedByProxy(d)
			}
			return Class{Kind: KindEdge, Host: host, Proxy: proxy, World: wd, Edge: d, Path: r.URL.Path}
		}
	}
	// each service owns its prefixes, and routes.go registers every route under the kind
	// that owns its path (TestRoutesAreClassifiedAsRegistered)
	path := routePath(r.URL)
	k := kindOfPath(path, r.Method)
	cls := Class{Kind: k, Host: host, Proxy: proxy, Path: path, Secret: k == KindCipher && path != "/v1/decrypt"}
	if !a.serves(l, k) {
		cls.Kind = KindNotFound // the body stays a secret all the same
	}
	return cls
}

// routePath is u's path as the router reads it (gin's UseRawPath): split where the
// path was sent with a slash, each segment decoded, and a slash sent escaped (%2F) kept
// as %2F inside its segment; a percent sign in a segment (sent as %25) reads %25, so
// that dpl%252F (the id "dpl%2F") and dpl%2F (the id "dpl/") stay two paths. A path
// sent without either is u.Path itself, at the cost of one search for a '%';
// /v1/deployments/dpl_x%2Fpromote stays one deployment id, not the promote route, for
// the front door, faults, the journal and coverage as for the router.
func routePath(u *url.URL) string {
	raw := u.RawPath
	if !hasEscapedSlash(raw) {
		if strings.IndexByte(u.Path, '%') < 0 {
			return u.Path
		}
		return strings.ReplaceAll(u.Path, "%", "%25")
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i, seg := range strings.Split(raw, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		s, err := url.PathUnescape(seg)
		if err != nil {
			return u.Path // not what net/http parsed: it never sets such a RawPath
		}
		b.WriteString(segmentEscaper.Replace(s))
	}
	return b.String()
}

// segmentEscaper writes a decoded segment as routePath gives it.
var segmentEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// hasEscapedSlash reports whether a raw path holds %2F (in either case).
func hasEscapedSlash(raw string) bool {
	for i := strings.IndexByte(raw, '%'); i >= 0 && i+2 < len(raw); {
		if raw[i+1] == '2' && (raw[i+2] == 'F' || raw[i+2] == 'f') {
			return true
		}
		j := strings.IndexByte(raw[i+1:], '%')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func kindOfPath(path, method string) Kind {
	switch {
	case strings.HasPrefix(path, "/v1/"):
		if path == "/v1/encrypt" || path == "/v1/decrypt" || namesCipher(path, method) {
			return KindCipher
		}
		return KindHosting
	case path == "/_emulator/health":
		return KindHealth
	case path == "/_emulator" || strings.HasPrefix(path, "/_emulator/"):
		return KindControl
	case path == "/docs" || strings.HasPrefix(path, "/docs/") || path == "/openapi.json" || path == "/openapi.yaml":
		return KindDocs
	case path == "/" || path == "/dashboard" || path == "/account/tokens" || strings.HasPrefix(path, "/dashboard/assets/"):
		return KindPage
	case namesCipher(path, method):
		return KindCipher // //v1/encrypt, /V1/Encrypt: no route, but the body is a secret
	}
	return KindNotFound
}

// namesCipher reports whether a request that is no cipher route may still carry what
// one would (a base URL with a trailing slash, another case, an escaped slash): a body
// sent to a path naming encrypt or decrypt is treated as the decryption service's, so
// the journal redacts it.
func namesCipher(path, method string) bool {
	if method != http.MethodPost && method != http.MethodPut {
		return false
	}
	p := strings.ToLower(path)
	return strings.Contains(p, "encrypt") || strings.Contains(p, "decrypt")
}

// serves reports whether listener l serves kind k.
func (a *API) serves(l Listener, k Kind) bool {
	switch k {
	case KindDocs, KindHealth:
		return true
	case KindNotFound:
		return true
	case KindCipher:
		return l == ListenerCipher || (l == ListenerMain && !a.cfg.CipherSeparate)
	case KindHosting:
		return l == ListenerMain
	case KindControl, KindPage:
		return l == ListenerControl || (l == ListenerMain && !a.cfg.ControlSeparate)
	}
	return false
}

// ownHost reports whether a Host header names hostemu's APIs rather than the edge: an
// IP address (the edge has no hosts that are addresses), localhost, or --public-url's
// host.
func (a *API) ownHost(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	if last := a.lastIPHost.Load(); last != nil && *last == host {
		return true // an IP address, as parsed below for an earlier request
	}
	if _, err := netip.ParseAddr(host); err == nil { // no allocation, unlike net.ParseIP
		kept := strings.Clone(host) // not the request's memory
		a.lastIPHost.Store(&kept)
		return true
	}
	return a.publicHost != "" && host == a.publicHost
}

// ownProxyTarget reports whether a proxy request's host is hostemu itself (isSelf): any
// other IP is another machine's, refused like any host hostemu does not emulate.
func (a *API) ownProxyTarget(r *http.Request, host string) bool {
	return a.isSelf(host, localAddr(r))
}

// isSelf reports whether host names this hostemu wherever a client may name another
// machine (a proxy request, CONNECT, a TLS name): localhost, a loopback address,
// --public-url's host, or local, the address the client connected to.
func (a *API) isSelf(host string, local netip.Addr) bool {
	if host == "localhost" || (a.publicHost != "" && host == a.publicHost) {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.IsLoopback() || (local.IsValid() && ip.Unmap() == local.Unmap()))
}

// localAddr is the address of hostemu's end of r's connection (the zero Addr when
// unknown).
func localAddr(r *http.Request) netip.Addr {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
			return ap.Addr().Unmap()
		}
	}
	return netip.Addr{}
}

// controlHost reports whether a host (normalised) is one the control API and the
// dashboard answer to while hostemu listens on loopback: localhost, a loopback address
// or --public-url's host. Not *.localhost: those names are the edge's (deployment hosts,
// and custom domains a page could attach), and a page served on one must never be the
// control API's origin.
func (a *API) controlHost(host string) bool {
	if host == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.IsLoopback()
	}
	return a.publicHost != "" && host == a.publicHost
}

// ownOrigin reports whether a web origin is the emulator's own: --public-url's, or
// scheme://host:port of this request where host is localhost, a loopback address or
// --public-url's host. Never an origin whose host the edge serves pages on.
func (a *API) ownOrigin(r *http.Request, origin string) bool {
	if a.publicOrigin != "" && strings.EqualFold(origin, a.publicOrigin) {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+r.Host) && a.controlHost(edge.NormalizeHost(r.Host))
}
