package httpapi

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/journal"
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
// The port does not matter, since nothing is dialled. Proxy-Authorization is ignored.
func (a *API) serveConnect(w http.ResponseWriter, r *http.Request) {
	host := edge.NormalizeHost(r.Host)
	e := journal.Entry{Method: r.Method, Path: r.Host, Service: serviceEdge, Host: host}
	if !a.emulated(host, r) {
		e.Status, e.ErrorCode = http.StatusForbidden, edge.CodeUnknownHost
		a.w.Record(e)
		a.edge.Error(w, r, http.StatusForbidden, edge.CodeUnknownHost,
			"hostemu does not emulate "+strconv.Quote(host)+"; CONNECT never leaves this machine")
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil { // HTTP/2 has no connection to hand over
		e.Status, e.ErrorCode = http.StatusMethodNotAllowed, edge.CodeMethodNotAllowed
		a.w.Record(e)
		a.edge.Error(w, r, http.StatusMethodNotAllowed, edge.CodeMethodNotAllowed, "CONNECT needs HTTP/1.1")
		return
	}
	e.Status = http.StatusOK
	a.w.Record(e)
	tunnel, isTLS, ok := a.openTunnel(conn, brw)
	if !ok {
		conn.Close()
		return
	}
	var conf *tls.Config
	if isTLS {
		conf = a.tlsConfig
	}
	a.serveTunnel(tunnel, conf)
}

// emulated reports whether CONNECT to the host of r stays with hostemu.
func (a *API) emulated(host string, r *http.Request) bool {
	var local net.IP
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		local = addr.IP
	}
	return a.emulatedHost(host, local)
}

// emulatedHost reports whether host (normalised) is one hostemu answers for itself, on
// a connection to local: its own names, hosts under the edge domain, custom domains.
func (a *API) emulatedHost(host string, local net.IP) bool {
	if host == "" {
		return false
	}
	if a.ownTLSName(host, local) {
		return true
	}
	return edge.Decide(host, false, a.w.Edge(), a.w.EdgeDomain()).Claimed
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
	srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: DefaultTunnelTimeout, IdleTimeout: time.Minute}
	ServeConn(srv, c, conf)
}

// bufferedConn reads what the server had buffered of the connection before the rest.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
