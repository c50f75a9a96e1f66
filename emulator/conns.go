package emulator

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter caps the connections open across the listeners it wraps. A listener
// takes a slot before it accepts; at the cap it closes the connection idle the longest
// (between requests) to make room, and with none to close waits for a slot to free
// (a connection that sends nothing is cut by the header timeout). New connections are
// never closed to make room: under load a real client's first request may be slow to
// be read. Idle connections are what an
// attacker can open by the thousand at no cost, and what a client loses least by losing
// (it reconnects), so a normal client is still served at the cap.
type connLimiter struct {
	max int

	mu    sync.Mutex                // guards the fields below
	slots int                       // taken: open connections and accepts under way
	open  map[*limitedConn]struct{} // the open connections
	freed chan struct{}             // closed when a slot may be free; nil while nobody waits

	evicted atomic.Int64 // connections closed to make room
}

func newConnLimiter(max int) *connLimiter {
	return &connLimiter{max: max, open: map[*limitedConn]struct{}{}}
}

// listener wraps ln so that its connections count against the cap.
func (l *connLimiter) listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l, done: make(chan struct{})}
}

// acquire takes a slot, closing idle connections to make room, until done is closed.
func (l *connLimiter) acquire(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.slots < l.max {
			l.slots++
			l.mu.Unlock()
			return true
		}
		victim := l.oldestIdleLocked()
		if victim == nil && l.freed == nil {
			l.freed = make(chan struct{})
		}
		freed := l.freed
		l.mu.Unlock()
		if victim != nil {
			l.evicted.Add(1)
			victim.Close()
			continue
		}
		select {
		case <-freed:
		case <-done:
			return false
		}
	}
}

// oldestIdleLocked is the connection idle the longest, or nil; l.mu is held.
func (l *connLimiter) oldestIdleLocked() *limitedConn {
	var oldest *limitedConn
	var oldestSince int64
	for c := range l.open {
		st, since := http.ConnState(c.state.Load()), c.since.Load()
		if st == http.StateIdle && (oldest == nil || since < oldestSince) {
			oldest, oldestSince = c, since
		}
	}
	return oldest
}

// release gives a slot back.
func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c != nil {
		delete(l.open, c)
	}
	l.slots--
	l.notifyLocked()
}

func (l *connLimiter) notifyLocked() {
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

func (l *connLimiter) add(conn net.Conn) *limitedConn {
	c := &limitedConn{Conn: conn, l: l}
	c.since.Store(time.Now().UnixNano())
	l.mu.Lock()
	l.open[c] = struct{}{}
	l.mu.Unlock()
	return c
}

// track is the servers' ConnState hook: it keeps each connection's state and since when.
func (l *connLimiter) track(conn net.Conn, st http.ConnState) {
	c, ok := conn.(*limitedConn)
	if !ok {
		return
	}
	c.state.Store(int32(st))
	c.since.Store(time.Now().UnixNano())
	if st == http.StateIdle {
		l.mu.Lock()
		l.notifyLocked() // a waiting accept may close it now
		l.mu.Unlock()
	}
}

// Open returns the number of open connections.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

type limitedListener struct {
	net.Listener
	l        *connLimiter
	done     chan struct{}
	doneOnce sync.Once
}

func (ll *limitedListener) Accept() (net.Conn, error) {
	if !ll.l.acquire(ll.done) {
		return nil, net.ErrClosed
	}
	conn, err := ll.Listener.Accept()
	if err != nil {
		ll.l.release(nil)
		return nil, err
	}
	return ll.l.add(conn), nil
}

func (ll *limitedListener) Close() error {
	ll.doneOnce.Do(func() { close(ll.done) })
	return ll.Listener.Close()
}

// limitedConn holds a slot until it is closed.
type limitedConn struct {
	net.Conn
	l         *connLimiter
	state     atomic.Int32 // http.ConnState
	since     atomic.Int64 // unix nanoseconds of the last state change
	closeOnce sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.l.release(c) })
	return err
}

// SetLinger reaches the TCP connection, for the drop fault's reset.
func (c *limitedConn) SetLinger(sec int) error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.SetLinger(sec)
	}
	return nil
}
