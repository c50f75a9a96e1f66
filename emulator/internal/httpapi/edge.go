package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

const serviceEdge = "edge"

// route sends a request to the edge when its host is a deployment host or a custom
// domain (or it is a proxy request for any host but hostemu's own), else to the APIs;
// CONNECT opens a tunnel to hostemu itself (see serveConnect).
func (a *API) route(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			a.serveConnect(w, r)
			return
		}
		host, proxy := edge.RequestHost(r)
		if a.ownHost(host) && (!proxy || a.ownProxyTarget(r, host)) {
			api.ServeHTTP(w, r)
			return
		}
		wd := a.edgeWorld(r, host)
		d := edge.Decide(host, proxy, wd.Edge(), wd.EdgeDomain())
		if !d.Claimed {
			api.ServeHTTP(w, r)
			return
		}
		a.serveEdge(w, r, wd, d)
	})
}

// ownHost reports whether host names hostemu itself: an IP address, localhost, or
// --public-url's host. Such a host is never the edge's, even in a proxy request.
func (a *API) ownHost(host string) bool {
	if host == "" || host == "localhost" {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil { // no allocation, unlike net.ParseIP
		return true
	}
	return a.publicHost != "" && host == a.publicHost
}

// ownProxyTarget reports whether a proxy request's host is hostemu itself: localhost, a
// loopback address, --public-url's host, or the address the client dialled. Any other
// IP is another machine's, refused like any host hostemu does not emulate.
func (a *API) ownProxyTarget(r *http.Request, host string) bool {
	if host == "localhost" || (a.publicHost != "" && host == a.publicHost) {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(addr.String()); err == nil && ap.Addr().Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// serveEdge answers an edge request, with its faults and its journal entry.
func (a *API) serveEdge(w http.ResponseWriter, r *http.Request, wd *world.World, d edge.Decision) {
	ew := &edgeWriter{ResponseWriter: w}
	e := journal.Entry{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Service: serviceEdge, Host: d.Host, Headers: journal.HeadersOf(r.Header)}
	start := time.Now()
	defer func() {
		rec := recover()
		e.Status = ew.status
		if rec != nil || ew.dropped {
			e.Status, e.ErrorCode = 0, "dropped"
			if ew.timedOut {
				e.ErrorCode = "timeout"
			}
		} else if code := ew.Header().Get("X-Hostemu-Error"); code != "" {
			e.ErrorCode = code
		}
		e.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		wd.Record(e)
		if rec != nil {
			panic(rec)
		}
	}()
	eh := a.edgeOf(wd)
	if act, ok := wd.MatchFault(fault.Request{Method: r.Method, Path: r.URL.Path, Service: serviceEdge, Host: d.Host}); ok {
		e.FaultID = act.FaultID
		if !a.applyEdgeFault(eh, ew, r, act) {
			return
		}
	}
	eh.Serve(ew, r, d)
}

// applyEdgeFault carries out an injected fault at the edge; it reports whether the
// request goes on to be served.
func (a *API) applyEdgeFault(eh *edge.Handler, w *edgeWriter, r *http.Request, act fault.Action) bool {
	a.wait(r.Context(), act.Delay)
	switch {
	case act.Status != 0:
		code, msg := injected(act)
		eh.Error(w, r, act.Status, code, msg)
		return false
	case act.RateLimit:
		w.Header().Set("Retry-After", itoa(int64(max(act.RetryAfter, 1))))
		eh.Error(w, r, http.StatusTooManyRequests, string(apperr.RateLimited), "injected fault "+act.FaultID+": rate limited")
		return false
	case act.Timeout:
		a.wait(r.Context(), fault.MaxTimeoutSeconds*time.Second)
		w.timedOut = true
		w.drop()
		return false
	case act.Drop:
		w.drop()
		return false
	}
	return true
}

// edgeWriter remembers the status an edge answer was written with.
type edgeWriter struct {
	http.ResponseWriter
	status   int
	dropped  bool
	timedOut bool
}

func (w *edgeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *edgeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// drop closes the connection with no answer (HTTP/2: resets the stream).
func (w *edgeWriter) drop() {
	w.dropped = true
	conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	resetConn(conn)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *edgeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// edgeDocsBase is where an edge error's doc_url points: --public-url, else the address
// the connection came in on (never the request's host, which is the edge's).
func (a *API) edgeDocsBase(r *http.Request) string {
	if a.cfg.PublicURL != "" {
		return a.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			return scheme + "://127.0.0.1:" + itoa(int64(tcp.Port))
		}
		return scheme + "://" + addr.String()
	}
	return scheme + "://localhost"
}

// publicHostOf is the host of --public-url, normalized, or "".
func publicHostOf(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil {
		return edge.NormalizeHost(strings.ToLower(u.Host))
	}
	return ""
}

// publicOriginOf is the web origin of --public-url (scheme://host), or "".
func publicOriginOf(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil && publicURL != "" {
		return u.Scheme + "://" + u.Host
	}
	return ""
}
