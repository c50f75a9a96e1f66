package httpapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// DefaultTunnelTimeout bounds how long a CONNECT tunnel may take to be answered and to
// send its first byte, when Config.TunnelTimeout is 0.
const DefaultTunnelTimeout = 10 * time.Second

// tlsRecordHandshake is the first byte of a TLS connection (a ClientHello record).
const tlsRecordHandshake = 0x16

// serveConnect answers CONNECT host:port. For a host hostemu emulates (its own names, a
// host under the edge domain, a custom domain the edge knows) it answers 200 and serves
// the tunnel itself: TLS with a certificate from the local CA when the client starts a
// handshake (as for https://), plain HTTP otherwise, with the same handler as the
// listener. Any other host is refused with 403 unknown_host: nothing is ever dialled.
// The port does not matter, since nothing is dialled. Proxy-Authorization names the
// namespace the tunnel serves (Basic base64("<ns>:")), as it does for plain proxy
// requests; without it, the default one.
func (a *API) serveConnect(ex *exchange, r *http.Request) {
	host, wd := ex.class.Host, ex.w
	if !connectPortOK(r.Host) {
		a.fail(ex, r, apperr.New(apperr.InvalidRequest, "CONNECT "+strconv.Quote(r.Host)+": the target is host:port, with a port from 1 to 65535 in decimal digits (no sign, no leading zero)"))
		return
	}
	if ns := ex.class.MissingNamespace; ns != "" {
		a.fail(ex, r, apperr.New(apperr.NamespaceNotFound, edge.Decision{Code: edge.CodeNamespaceNotFound, Namespace: ns}.Message()))
		return
	}
	if !a.emulated(wd, host, r) {
		a.fail(ex, r, apperr.New(apperr.UnknownHost, "hostemu does not emulate "+strconv.Quote(host)+"; CONNECT never leaves this machine"))
		return
	}
	if d := edge.Decide(host, true, wd.Edge(), wd.EdgeDomain()); d.Claimed && !a.proxyVouches(d) {
		a.fail(ex, r, apperr.New(apperr.UnknownHost, refusedByProxy(d).Message()))
		return
	}
	conn, brw, err := http.NewResponseController(ex.ResponseWriter).Hijack()
	if err != nil { // HTTP/2 has no connection to hand over
		a.fail(ex, r, apperr.New(apperr.MethodNotAllowed, "CONNECT needs HTTP/1.1"))
		return
	}
	// journaled now, before any request the tunnel carries
	ex.status, ex.journaled = http.StatusOK, false
	a.record(ex, r)
	tunnel, isTLS, ok := a.openTunnel(conn, brw)
	if !ok {
		conn.Close()
		return
	}
	var conf *tls.Config
	if isTLS {
		conf = a.tlsConfig
		if wd != a.w {
			conf = a.tlsConfigOf(wd)
		}
	}
	a.serveTunnel(&worldConn{Conn: tunnel, w: wd}, conf)
}

// connectPortOK reports whether a CONNECT target (host:port, [v6]:port) names a port
// from 1 to 65535 in plain decimal digits, with no sign and no leading zero. Nothing is
// dialled whatever the port, but a client naming port 0, 99999, +80 or 0080 has a bug
// the real network would show it (strconv.Atoi takes a sign and leading zeros). A sign
// does not get here today: net/http refuses such a request line itself, with its
// plain-text 400 (TestConnectSignedPortIsRefusedByNetHTTP); the check stays for the day
// it lets one through.
func connectPortOK(target string) bool {
	_, port, err := net.SplitHostPort(target)
	if err != nil || port == "" || len(port) > len("65535") || port[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// worldConn is a tunnel's connection, marked with the world it serves: TunnelContext
// puts that world in the context of every request read from it.
type worldConn struct {
	net.Conn
	w *world.World
}

// NetConn is the tunnel's connection under it (the connection cap finds its slot).
func (c *worldConn) NetConn() net.Conn { return c.Conn }

// tunnelWorldKey is the context key of a tunnel's world.
type tunnelWorldKey struct{}

// TunnelContext is an http.Server's ConnContext for the server of CONNECT tunnels: it
// finds the world the tunnel serves (under the TLS and bookkeeping wrappers of its
// connection), so the tunnel's requests go to that namespace.
func TunnelContext(ctx context.Context, c net.Conn) context.Context {
	for c != nil {
		switch x := c.(type) {
		case *worldConn:
			return context.WithValue(ctx, tunnelWorldKey{}, x.w)
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return ctx
		}
	}
	return ctx
}

// emulated reports whether CONNECT to the host of r stays with hostemu (in world wd).
func (a *API) emulated(wd *world.World, host string, r *http.Request) bool {
	return a.emulatedHost(wd, host, localAddr(r))
}

// emulatedHost reports whether host (normalised) is one hostemu answers for itself, on
// a connection to local: its own names (isSelf), hosts under the edge domain, custom
// domains of world wd.
func (a *API) emulatedHost(wd *world.World, host string, local netip.Addr) bool {
	if host == "" {
		return false
	}
	return a.isSelf(host, local) || edge.Decide(host, false, wd.Edge(), wd.EdgeDomain()).Claimed
}

// openTunnel answers 200 and waits, within the tunnel timeout, for the client's first
// byte: isTLS when it starts a TLS handshake, else the tunnel is read as plain HTTP.
func (a *API) openTunnel(conn net.Conn, brw *bufio.ReadWriter) (tunnel net.Conn, isTLS, ok bool) {
	timeout := a.cfg.TunnelTimeout
	if timeout <= 0 {
		timeout = DefaultTunnelTimeout
	}
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := brw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return nil, false, false
	}
	if err := brw.Flush(); err != nil {
		return nil, false, false
	}
	first, err := brw.Reader.Peek(1)
	if err != nil {
		return nil, false, false
	}
	conn.SetDeadline(time.Time{})
	return &bufferedConn{Conn: conn, r: brw.Reader}, first[0] == tlsRecordHandshake, true
}

// serveTunnel serves the requests of a tunnel's connection until it closes: over TLS
// with conf unless it is nil.
func (a *API) serveTunnel(c net.Conn, conf *tls.Config) {
	if a.cfg.ServeTunnel != nil {
		a.cfg.ServeTunnel(c, conf)
		return
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: DefaultTunnelTimeout, IdleTimeout: time.Minute}
	ServeConn(srv, c, conf)
}

// bufferedConn reads what the server had buffered of the connection before the rest.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// NetConn is the hijacked connection under it.
func (c *bufferedConn) NetConn() net.Conn { return c.Conn }
