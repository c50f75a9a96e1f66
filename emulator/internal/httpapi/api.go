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
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/compress"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
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
}

// API serves the default world, and the namespaces' worlds, over HTTP.
type API struct {
	w         *world.World        // the default world
	ns        *namespace.Registry // the others
	cfg       Config
	log       *slog.Logger
	cursorKey []byte
	main      *gin.Engine
	cipher    *gin.Engine
	edge      *edge.Handler // deployments and custom domains, chosen by host
	handler   http.Handler  // the edge in front of mainHTTP
	tlsConfig *tls.Config   // TLSConfig, for CONNECT tunnels
	// publicHost is --public-url's host: hostemu's own, never the edge's.
	publicHost string
	// publicOrigin is --public-url's web origin (scheme://host), or "".
	publicOrigin string
	// mainHTTP and cipherHTTP serve main and cipher, gzipping answers when asked
	// (compress.Responses; see ownRequest)
	mainHTTP, cipherHTTP http.Handler
	controlEngine        *gin.Engine  // the control API alone, for its own listener
	controlHTTP          http.Handler // controlEngine, as mainHTTP is main
	bodies               *budget      // request-body bytes in flight, across both engines

	preflights  map[*gin.Engine]map[string]bool // paths with an OPTIONS route, while building
	release     chan struct{}                   // closed by Release
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
	a := &API{w: w, ns: cfg.Namespaces, cfg: cfg, log: cfg.Logger, release: make(chan struct{}), preflights: map[*gin.Engine]map[string]bool{}}
	mac := hmac.New(sha256.New, []byte("hostemu cursor key"))
	binary.Write(mac, binary.BigEndian, cfg.Seed)
	a.cursorKey = mac.Sum(nil)
	a.bodies = newBudget(cfg.Limits.bodyBytesInFlight())
	a.publicHost, a.publicOrigin = publicHostOf(cfg.PublicURL), publicOriginOf(cfg.PublicURL)
	a.edge = edge.New(edge.Options{Lookup: w.Edge(), Files: w.Files(), EdgeDomain: w.EdgeDomain(), DocsBase: a.edgeDocsBase})
	a.main = a.engine()
	a.hostingRoutes(a.main)
	if !cfg.CipherSeparate {
		a.cipherRoutes(a.main)
	}
	if cfg.ControlSeparate {
		a.healthRoute(a.main)
	} else {
		a.controlRoutes(a.main)
		a.dashboardRoutes(a.main)
	}
	a.docsRoutes(a.main)
	a.controlEngine = a.engine()
	a.controlRoutes(a.controlEngine)
	a.dashboardRoutes(a.controlEngine)
	a.docsRoutes(a.controlEngine)
	a.cipher = a.engine()
	a.cipherRoutes(a.cipher)
	a.healthRoute(a.cipher)
	a.docsRoutes(a.cipher) // its errors' doc_url points at this listener
	a.mainHTTP, a.cipherHTTP = compress.Responses(ownRequest(a.main)), compress.Responses(ownRequest(a.cipher))
	a.controlHTTP = compress.Responses(ownRequest(a.controlEngine))
	a.handler = a.route(a.mainHTTP)
	a.tlsConfig = a.TLSConfig()
	return a
}

// Release ends every wait of a delay or timeout fault, now and from now on: a server
// shutting down does not wait for them.
func (a *API) Release() { a.releaseOnce.Do(func() { close(a.release) }) }

// Handler serves the edge (deployment hosts and custom domains, by host), and for every
// other host the hosting service, the control API, the docs and, unless it has its own
// listener, the decryption service.
func (a *API) Handler() http.Handler { return a.handler }

// ControlHandler serves the control API (with health and the docs) alone.
func (a *API) ControlHandler() http.Handler { return a.controlHTTP }

// CipherHandler serves the decryption service (and health) alone.
func (a *API) CipherHandler() http.Handler { return a.cipherHTTP }

// ownRequest serves h a shallow copy of each request with a body: the middleware
// wraps the body (journal capture, budget, decoding), and net/http must find its own
// body unchanged after the handler, to tell a body never asked for (a refused Expect:
// 100-continue request: close the connection, do not wait for it) from one to discard.
func ownRequest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r = r.WithContext(r.Context())
		}
		h.ServeHTTP(w, r)
	})
}

func (a *API) engine() *gin.Engine {
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	r.Use(a.recovery(), a.controlGuard(), a.cors(), a.decodeBody(), a.public(), a.bodyBudget())
	r.NoRoute(a.handle(func(c *gin.Context) (any, error) {
		return nil, apperr.New(apperr.NotFound, "no route "+c.Request.Method+" "+c.Request.URL.Path)
	}))
	r.NoMethod(a.handle(func(c *gin.Context) (any, error) {
		return nil, apperr.New(apperr.MethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	}))
	return r
}

// publicRoute registers a public route (a GET with its HEAD twin) and answers CORS
// preflights on its path.
func (a *API) publicRoute(r *gin.Engine, method, path string, auth gin.HandlerFunc, h handlerFunc) {
	if method == http.MethodGet {
		get(r, path, auth, a.handle(h))
	} else {
		r.Handle(method, path, auth, a.handle(h))
	}
	if a.preflights[r] == nil {
		a.preflights[r] = map[string]bool{}
	}
	if !a.preflights[r][path] {
		a.preflights[r][path] = true
		r.OPTIONS(path, a.preflight)
	}
}
