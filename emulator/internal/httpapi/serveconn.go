package httpapi

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// ServeConn serves the requests of one connection with srv until the connection
// closes or srv shuts down: the way to serve a connection handed over (a CONNECT
// tunnel) with a server's timeouts and protocols. With conf, the connection is the
// server side of TLS (HTTP/2 when the client negotiates it and srv allows it).
func ServeConn(srv *http.Server, c net.Conn, conf *tls.Config) {
	notify := &closeNotifyConn{Conn: c, closed: make(chan struct{})}
	ln := &oneConnListener{conn: notify, notify: notify, done: make(chan struct{})}
	if conf != nil {
		ln.conn = tls.Server(notify, conf) // net/http serves a *tls.Conn as TLS
	}
	srv.Serve(ln) // returns once the connection is closed, or at shutdown
	if !ln.wasAccepted() {
		ln.conn.Close() // the server had shut down already
	}
}

// oneConnListener accepts its one connection, then blocks until that connection or the
// listener is closed.
type oneConnListener struct {
	conn     net.Conn
	notify   *closeNotifyConn
	accepted bool
	mu       sync.Mutex // guards accepted
	done     chan struct{}
	doneOnce sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	first := !l.accepted
	l.accepted = true
	l.mu.Unlock()
	if first {
		return l.conn, nil
	}
	select {
	case <-l.notify.closed:
	case <-l.done:
	}
	return nil, net.ErrClosed
}

func (l *oneConnListener) wasAccepted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

func (l *oneConnListener) Close() error {
	l.doneOnce.Do(func() { close(l.done) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// closeNotifyConn tells its listener when it is closed.
type closeNotifyConn struct {
	net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// NetConn is the connection it wraps (TunnelContext looks through it).
func (c *closeNotifyConn) NetConn() net.Conn { return c.Conn }

func (c *closeNotifyConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { close(c.closed) })
	return err
}
