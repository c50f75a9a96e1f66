package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Limits are the bounds every connection hostemu serves is held to.
type Limits struct {
	ReadHeaderTimeout time.Duration // for a request's headers
	IdleTimeout       time.Duration // between requests on a keep-alive connection
	BodyReadTimeout   time.Duration // before MinBodyRate applies to a body
	MinBodyRate       int64         // bytes per second, the slowest a body may arrive
	MaxConnections    int           // open at once, across listeners and tunnels
	WriteStallTimeout time.Duration // a write may wait this long for a reader
}

// fdReserve is how many file descriptors the connection cap leaves for everything else
// (state and scenario files, watchers, the log).
const fdReserve = 64

// NewConns is the connection cap for lim: MaxConnections, but no more than the
// file-descriptor limit (raised to its hard limit first) allows.
func NewConns(lim Limits, log *slog.Logger) *Conns {
	want := lim.MaxConnections
	if soft, ok := raiseFileLimit(); ok && soft < uint64(want)+fdReserve {
		want = max(int(soft)-fdReserve, 16)
		log.Warn("connection cap lowered to fit the open-file limit", "max_connections", want, "open_files", soft)
	}
	return newConns(want, lim)
}

// Evicted is how many idle connections were closed to make room at the cap.
func (l *Conns) Evicted() int64 { return l.evicted.Load() }

// StallClosed is how many connections were closed because their client stopped reading.
func (l *Conns) StallClosed() int64 { return l.stallClosed.Load() }

// TimedOut is how many connections were closed by the header or idle timeout.
func (l *Conns) TimedOut() int64 { return l.timedOut.Load() }

// server is the http.Server every listener and tunnel of hostemu serves with: h within
// the limits' timeouts and body rate.
func server(h http.Handler, lim Limits, protocols *http.Protocols, errorLog *slog.Logger, level slog.Level) *http.Server {
	return &http.Server{
		Protocols:         protocols,
		Handler:           BodyDeadline(h, lim.BodyReadTimeout, lim.MinBodyRate),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    http.DefaultMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(errorLog.Handler(), level),
	}
}

// HTTPServer serves h on a listener of conns, within the limits: header and idle
// timeouts (kept by conns' janitor: see Conns.Run), a body read deadline that moves
// with a minimum rate, and the shared connection cap. It speaks HTTP/1.1 and HTTP/2
// over cleartext (h2c with prior knowledge, as curl --http2-prior-knowledge and
// gRPC-style clients send it).
func HTTPServer(h http.Handler, lim Limits, conns *Conns, log *slog.Logger) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := server(h, lim, &protocols, log, slog.LevelWarn)
	janitorTimeouts(srv, conns)
	return srv
}

// janitorTimeouts hands the header and idle timeouts of srv, which serves a listener
// of conns, to conns' janitor.
func janitorTimeouts(srv *http.Server, conns *Conns) {
	srv.ConnState = conns.Track
	srv.ConnContext = connContext
	srv.ReadHeaderTimeout, srv.IdleTimeout = 0, 0
}

// TLSServer is HTTPServer over TLS with conf: HTTP/1.1 and HTTP/2. Refused handshakes
// are expected (a client that does not trust the CA yet) and logged at debug.
func TLSServer(h http.Handler, lim Limits, conns *Conns, conf *tls.Config, log *slog.Logger) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	srv := server(h, lim, &protocols, log, slog.LevelDebug)
	janitorTimeouts(srv, conns)
	srv.TLSConfig = conf
	return srv
}

// TunnelServer serves the connections of CONNECT tunnels with h, within the limits of
// the listeners. Tunnels hold the slot of the connection they came in on, so the
// connection cap counts them once Track is set as the server's ConnState. It keeps
// net/http's own header and idle timeouts: a tunnel may come from a server of the
// caller's (Emulator.Handler), with no janitor.
func TunnelServer(h http.Handler, lim Limits, log *slog.Logger) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	return server(h, lim, &protocols, log, slog.LevelDebug) // handshake refusals are the point, not a fault
}

// ListenFallback listens on addr; when its port is in use and fallback is set, on a
// free port of the same host instead (moved).
func ListenFallback(addr string, fallback bool) (ln net.Listener, moved bool, err error) {
	ln, err = net.Listen("tcp", addr)
	if err == nil || !fallback || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, false, err
	}
	host, _, _ := net.SplitHostPort(addr)
	if ln, err2 := net.Listen("tcp", net.JoinHostPort(host, "0")); err2 == nil {
		return ln, true, nil
	}
	return nil, false, err
}

// Port is a TCP address's port (0 for another kind of address).
func Port(a net.Addr) int {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.Port
	}
	return 0
}

// connKey is the context key of a request's connection of Conns (connContext).
type connKey struct{}

// connContext is the ConnContext of a server of Conns, whose ConnState is Track: its
// requests' contexts carry their connection, so that BodyDeadline hands a body's
// deadline to it (limitedConn.setBodyDeadline) and Track ends it with the request.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := limitedOf(c); lc != nil {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// Served reports whether r came in on a connection of a listener of Conns (its
// server's ConnContext is connContext): a request net/http read off one of hostemu's
// own listeners, whose header map it made for that request alone and which nothing
// writes once the handler has returned. A request handed to hostemu's handler by a
// caller (a test's server or ServeHTTP, a tunnel's server) is not.
func Served(r *http.Request) bool { return r.Context().Value(connKey{}) != nil }
