package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/compress"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/tlsca"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// Config is the HTTP layer's part of the emulator's options.
type Config struct {
	PublicURL      string // base of links to hostemu; empty: the request's scheme and host
	CORSOrigins    []string
	TrustedProxies []netip.Prefix
	ControlToken   string
	// ControlOrigins are web origins allowed to drive the control API besides the
	// emulator's own (--control-origins).
	ControlOrigins []string
	// CheckHost refuses control requests that name no loopback host (nor PublicURL's):
	// set while every listener is on loopback.
	CheckHost bool
	Version   string
	Seed      int64
	Logger    *slog.Logger
	// CipherSeparate serves the decryption service only from CipherHandler.
	CipherSeparate bool
	// ControlSeparate serves the control API only from ControlHandler (Handler keeps
	// /_emulator/health).
	ControlSeparate bool
	Limits          Limits // body bytes in flight, state size
	// CA signs the certificates of TLS connections (TLSConfig, CONNECT tunnels).
	CA *tlsca.CA
	// ServeTunnel serves a CONNECT tunnel's connection, over TLS with conf unless it is
	// nil, until it closes (ServeConn with the listener's limits); nil: ServeConn with
	// default timeouts.
	ServeTunnel func(c net.Conn, conf *tls.Config)
	// TunnelTimeout bounds a CONNECT tunnel's wait for the client's first byte
	// (DefaultTunnelTimeout when 0).
	TunnelTimeout time.Duration
	// Namespaces holds the namespaces beside the default world (nil: none can be made).
	Namespaces *namespace.Registry
	// ProxyDomains are the custom domains (suffix patterns, see underAny) the proxy
	// serves besides deployment hosts and reserved test names (--proxy-domains).
	ProxyDomains []string
	// TLSURL is the HTTPS listener's base URL (https://127.0.0.1:4743), "" without one:
	// links in answers served through a CONNECT tunnel point there, since the tunnel
	// came in on a listener that speaks plain HTTP.
	TLSURL string
	// URLForm is the scheme and port of deployment URLs: a domain's 308 answered on a
	// plain connection sends the client there.
	URLForm state.URLForm
	// ImportWait bounds how long a state or bundle import waits for the one under way
	// (DefaultImportWait when 0).
	ImportWait time.Duration
}

// API serves the default world, and the namespaces' worlds, over HTTP.
type API struct {
	w         *world.World        // the default world
	ns        *namespace.Registry // the others
	cfg       Config
	log       *slog.Logger
	cursorKey []byte
	engine    *gin.Engine   // every API route (routes.go), for every listener
	apiHTTP   http.Handler  // engine, gzipping answers when asked
	edge      *edge.Handler // the default world's deployments and custom domains
	tlsConfig *tls.Config   // TLSConfig, for CONNECT tunnels
	// publicHost is --public-url's host: hostemu's own, never the edge's.
	publicHost string
	// lastIPHost is the last host ownHost found to be an IP address: a client sends the
	// same Host on every request, and parsing it again was a part of every request's
	// classification.
	lastIPHost atomic.Pointer[string]
	// publicOrigin is --public-url's web origin (scheme://host), or "".
	publicOrigin string
	bodies       *budget // request-body bytes in flight, across every listener
	rendered     *renderCache
	subscribers  atomic.Int64  // event streams open
	imports      chan struct{} // holds the one state import under way
	bundles      chan struct{} // holds the bundle exports under way (maxBundleExports)
	exports      *stateExports // the state exports' shared encodings

	release     chan struct{} // closed by Release
	releaseOnce sync.Once
}

// New builds the handlers of world w and of cfg.Namespaces.
func New(w *world.World, cfg Config) *API {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.CORSOrigins) == 0 {
		cfg.CORSOrigins = []string{"*"}
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	if cfg.CA == nil {
		ca, err := tlsca.Generate()
		if err != nil {
			panic(err) // crypto/rand does not fail
		}
		cfg.CA = ca
	}
	a := &API{w: w, ns: cfg.Namespaces, cfg: cfg, log: cfg.Logger, release: make(chan struct{})}
	mac := hmac.New(sha256.New, []byte("hostemu cursor key"))
	binary.Write(mac, binary.BigEndian, cfg.Seed)
	a.cursorKey = mac.Sum(nil)
	a.bodies = newBudget(cfg.Limits.bodyBytesInFlight())
	a.rendered = newRenderCache()
	a.imports = make(chan struct{}, 1)
	a.bundles = make(chan struct{}, maxBundleExports)
	a.exports = newStateExports()
	a.publicHost, a.publicOrigin = publicHostOf(cfg.PublicURL), publicOriginOf(cfg.PublicURL)
	a.edge = edge.New(edge.Options{Lookup: w.Edge(), Files: w.Files(), EdgeDomain: w.EdgeDomain(), DocsBase: a.edgeDocsBase, RedirectForm: a.redirectForm})
	a.engine = a.newEngine()
	a.routes(a.engine)
	a.apiHTTP = compress.Responses(keepAbove(a.engine)) // the journal keeps answers as written, not gzipped
	a.tlsConfig = a.TLSConfig()
	return a
}

// Release ends every wait of a delay or timeout fault, now and from now on: a server
// shutting down does not wait for them.
func (a *API) Release() { a.releaseOnce.Do(func() { close(a.release) }) }

// Handler serves --addr (and its HTTPS twin, and CONNECT tunnels): the edge
// (deployment hosts and custom domains, by host), the proxy, and for hostemu's own
// hosts the hosting service, the control API, the dashboard, the docs and, unless they
// have listeners of their own, the decryption service and the control API.
func (a *API) Handler() http.Handler { return door{a, ListenerMain} }

// ControlHandler serves --control-addr: the control API, the dashboard and the docs.
func (a *API) ControlHandler() http.Handler { return door{a, ListenerControl} }

// CipherHandler serves --cipher-addr: the decryption service, health and the docs.
func (a *API) CipherHandler() http.Handler { return door{a, ListenerCipher} }

// newEngine is the router: it finds the handler of a request the front door has
// classified and the pipeline has prepared. It routes strictly (no redirects) and
// answers unknown routes and methods in the envelope.
func (a *API) newEngine() *gin.Engine {
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	// An escaped slash (%2F) is part of its segment: routing on the path as sent keeps
	// dpl_x%2Fpromote one id (unescaped into the parameter), where the decoded path
	// would take it for the promote route. net/http sets RawPath only when the path was
	// sent with escapes of its own, so a plain path costs nothing more.
	r.UseRawPath = true
	r.NoRoute(a.handle(func(c *gin.Context) (any, error) {
		return nil, apperr.New(apperr.NotFound, "no route "+c.Request.Method+" "+sentPath(c))
	}))
	r.NoMethod(a.handle(func(c *gin.Context) (any, error) {
		// gin has set Allow to the route's methods: name them, so HEAD or GET on a
		// POST-only route says what to send instead
		return nil, apperr.New(apperr.MethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+sentPath(c)+"; it answers "+c.Writer.Header().Get("Allow"))
	}))
	return r
}

// publicRoute registers a route of the emulated services (a GET with its HEAD twin)
// behind its auth check. Their CORS preflights never reach the router: the pipeline
// answers them on every path.
func (a *API) publicRoute(r *gin.Engine, method, path string, auth gin.HandlerFunc, h handlerFunc) {
	if method == http.MethodGet {
		get(r, path, auth, a.handle(h))
		return
	}
	r.Handle(method, path, auth, a.handle(h))
}
