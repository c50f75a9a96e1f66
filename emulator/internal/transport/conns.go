package transport

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/notify"
)

// Conns caps the connections open across the listeners it wraps. A listener
// takes a slot before it accepts; at the cap it closes, to make room, the connection
// whose write has been blocked the longest (its client stopped reading) once blocked
// for a tenth of the stall timeout, else the one idle the longest (between requests),
// and with none to close waits for a slot to free or a write to count as stalled (a
// connection that sends nothing is cut by the header timeout). New connections are
// never closed to make room: under load a real client's first request may be slow to
// be read. Stalled and idle connections are what an attacker can open by the thousand
// at little cost, and what a client loses least by losing (it reconnects, or it was
// not reading), so a normal client is still served at the cap.
type Conns struct {
	max int
	// stall is how long a write may block before the janitor closes its connection;
	// at the cap, one blocked for stall/10 is evictable.
	stall time.Duration
	// header and idle are the header and idle timeouts the janitor holds connections
	// to (see Run); 0 turns one off.
	header, idle time.Duration
	// now is a coarse clock in Unix nanoseconds, moved by the janitor: a write marks its
	// start with it, for two atomic stores a write instead of two clock reads.
	now atomic.Int64

	mu    sync.Mutex                // guards the fields below
	slots int                       // taken: open connections and accepts under way
	open  map[*limitedConn]struct{} // the open connections

	freed notify.Signal // a slot may be free

	evicted     atomic.Int64 // connections closed to make room
	stallClosed atomic.Int64 // connections closed for a write blocked stall long
	timedOut    atomic.Int64 // connections closed by the header or idle timeout
}

func newConns(max int, lim Limits) *Conns {
	l := &Conns{max: max, stall: lim.WriteStallTimeout, header: lim.ReadHeaderTimeout, idle: lim.IdleTimeout, open: map[*limitedConn]struct{}{}}
	l.now.Store(time.Now().UnixNano())
	return l
}

// janitorTick is how often the janitor looks at the connections: a tenth of the
// shortest of the stall, header and idle timeouts, at least every 10 ms and at most
// every second. A timeout is kept to within that tick.
func (l *Conns) janitorTick() time.Duration {
	shortest := l.stall
	for _, d := range []time.Duration{l.header, l.idle} {
		if d > 0 && (shortest <= 0 || d < shortest) {
			shortest = d
		}
	}
	return min(max(shortest/10, 10*time.Millisecond), time.Second)
}

// Run moves the coarse clock and closes, until done is closed, the connections that
// overstayed a timeout:
//   - a write blocked for the stall timeout (its client stopped reading);
//   - a new connection (TLS handshake included) without a whole request's headers
//     within the header timeout;
//   - a keep-alive connection whose next request started arriving but whose headers
//     are not in within the header timeout;
//   - a keep-alive connection idle, with nothing arriving, for the idle timeout.
//
// The janitor keeps these rather than net/http's per-request read deadlines, which
// arm and disarm a runtime timer two or three times a request; a request being served
// (ConnState active) is bounded by the body deadline and its handler, not by these.
func (l *Conns) Run(done <-chan struct{}) {
	t := time.NewTicker(l.janitorTick())
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			l.now.Store(now.UnixNano())
			stalled, timedOut := l.overdue(now.UnixNano())
			for _, c := range stalled {
				l.stallClosed.Add(1)
				c.Close()
			}
			for _, c := range timedOut {
				l.timedOut.Add(1)
				c.Close()
			}
		}
	}
}

// overdue lists the connections whose write started at least the stall timeout before
// now, and those over their header or idle timeout (see Run).
func (l *Conns) overdue(now int64) (stalled, timedOut []*limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	over := func(since int64, d time.Duration) bool { return d > 0 && now-since >= int64(d) }
	for c := range l.open {
		if w := c.writing.Load(); w != 0 && now-w >= int64(l.stall) {
			stalled = append(stalled, c)
			continue
		}
		switch http.ConnState(c.state.Load()) {
		case http.StateNew:
			if over(c.since.Load(), l.header) {
				timedOut = append(timedOut, c)
			}
		case http.StateIdle:
			if r := c.reading.Load(); r != 0 && over(r, l.header) || r == 0 && over(c.since.Load(), l.idle) {
				timedOut = append(timedOut, c)
			}
		}
	}
	return stalled, timedOut
}

// Listener wraps ln so that its connections count against the cap.
func (l *Conns) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l, done: make(chan struct{})}
}

// acquire takes a slot, closing a stalled writer or an idle connection to make room,
// until done is closed. With none to close it waits for a slot to free, or for the
// oldest write under way to have been blocked long enough to count as stalled: nothing
// else would wake it then, and every slot held by a client that stopped reading would
// keep the others waiting for the janitor's whole stall timeout.
func (l *Conns) acquire(done <-chan struct{}) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		freed := l.freed.Next()
		l.mu.Lock()
		if l.slots < l.max {
			l.slots++
			l.mu.Unlock()
			return true
		}
		victim, wait := l.victimLocked()
		l.mu.Unlock()
		if victim != nil {
			l.evicted.Add(1)
			victim.Close()
			continue
		}
		var stalls <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			stalls = timer.C
		}
		select {
		case <-freed:
		case <-stalls:
		case <-done:
			return false
		}
	}
}

// victimLocked is the connection to close to make room, or nil: first the one whose
// write has been blocked the longest, if for at least stalledAfter (its client stopped
// reading: it holds a slot and serves nobody); else the one idle the longest (between
// requests, a tunnel's included: its client reconnects). With neither, wait is how long
// until the oldest write under way would count as stalled (0: no write under way).
// l.mu is held.
func (l *Conns) victimLocked() (victim *limitedConn, wait time.Duration) {
	var idle, stalled *limitedConn
	var idleSince, stalledSince int64
	for c := range l.open {
		st, since := http.ConnState(c.state.Load()), c.since.Load()
		if st == http.StateIdle && (idle == nil || since < idleSince) {
			idle, idleSince = c, since
		}
		if w := c.writing.Load(); w != 0 && (stalled == nil || w < stalledSince) {
			stalled, stalledSince = c, w
		}
	}
	// the real clock, not the coarse one, which lags by up to a tick: a write's coarse
	// start is at most its real one, so it counts as stalled on time, never late
	now, after := time.Now().UnixNano(), int64(l.stalledAfter())
	if stalled != nil && now-stalledSince >= after {
		return stalled, 0
	}
	if idle != nil {
		return idle, 0
	}
	if stalled != nil {
		return nil, time.Duration(stalledSince + after - now)
	}
	return nil, 0
}

// stalledAfter is how long a write must have been blocked for its connection to be
// closed at the cap: a tenth of the stall timeout.
func (l *Conns) stalledAfter() time.Duration { return l.stall / 10 }

// release gives a slot back.
func (l *Conns) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c != nil {
		delete(l.open, c)
	}
	l.slots--
	l.freed.Notify()
}

func (l *Conns) add(conn net.Conn) *limitedConn {
	c := &limitedConn{Conn: conn, l: l}
	c.since.Store(time.Now().UnixNano())
	l.mu.Lock()
	l.open[c] = struct{}{}
	l.mu.Unlock()
	return c
}

// Track is the servers' ConnState hook: it keeps each connection's state and since when.
// The server of CONNECT tunnels reports too: a tunnel's connection wraps the one it came
// in on (TLS, the tunnel's own wrappers), whose state becomes the tunnel's, so an idle
// tunnel is evictable like an idle keep-alive.
func (l *Conns) Track(conn net.Conn, st http.ConnState) {
	c := limitedOf(conn)
	if c == nil {
		return
	}
	c.state.Store(int32(st))
	c.reading.Store(0)
	if st == http.StateIdle { // only an idle connection's age is ever asked
		// a body's deadline ends with its request, read to its end or not (net/http
		// clears the read deadline next, too)
		if c.bodyDue.Load() != nil || c.bodySet.Load() {
			c.clearBodyDeadline()
		}
		c.since.Store(l.now.Load())
		l.freed.Notify() // a waiting accept may close it now
	}
}

// Open returns the number of open connections.
func (l *Conns) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

type limitedListener struct {
	net.Listener
	l        *Conns
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

// limitedOf is the limited connection under conn's wrappers, or nil.
func limitedOf(conn net.Conn) *limitedConn {
	for conn != nil {
		switch c := conn.(type) {
		case *limitedConn:
			return c
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// limitedConn holds a slot until it is closed.
type limitedConn struct {
	net.Conn
	l         *Conns
	state     atomic.Int32 // http.ConnState
	since     atomic.Int64 // the coarse time of the last turn idle (the accept's while new)
	reading   atomic.Int64 // the coarse time bytes of the next request arrived while idle, 0 before
	writing   atomic.Int64 // the coarse time a write under way started, 0 when none
	closeOnce sync.Once

	// bodyDue is a request body's read deadline (BodyDeadline) not yet set on Conn:
	// the next Read sets it before it reads. Every other deadline set on the
	// connection replaces it (SetReadDeadline, SetDeadline).
	bodyDue atomic.Pointer[time.Time]
	// bodySet says Conn's read deadline is a body's, set by Read: clearBodyDeadline
	// clears it.
	bodySet atomic.Bool

	// readSets counts the read deadlines other than none set on Conn through this
	// wrapper, each counted after it is set; clearAt is 1 + readSets as read before the
	// last clearing of the read deadline (SetReadDeadline of the zero time) was set, 0
	// before any. While clearAt is 1 + readSets, Conn's read deadline is none, and
	// clearing it again is skipped: net/http clears it five or six times a request
	// (before it reads a request's head, after, before and after its background
	// read, on turning idle, when the next request arrives), each a runtime call that
	// takes the poller's lock (about 65 ns), where one is needed after the background
	// read's wake-up. A clearing that races with a deadline being set can only leave
	// clearAt behind readSets: the next clearing is then made, never skipped wrongly.
	readSets, clearAt atomic.Uint64
}

// setRead sets Conn's read deadline to t (with the write deadline too when both), and
// keeps readSets and clearAt (see there).
func (c *limitedConn) setRead(t time.Time, both bool) error {
	set := c.Conn.SetReadDeadline
	if both {
		set = c.Conn.SetDeadline
	}
	if !t.IsZero() {
		err := set(t)
		c.readSets.Add(1) // after: a clearing that read the count before does not count as last
		return err
	}
	seen := c.readSets.Load()
	if !both && c.clearAt.Load() == seen+1 {
		return nil // none already
	}
	err := set(t)
	if err == nil {
		c.clearAt.Store(seen + 1)
	}
	return err
}

// setBodyDeadline has the next Read set *due as Conn's read deadline. A body that
// net/http read into its buffer with the request's head is never read from the
// connection, and then no deadline is set at all (a runtime timer armed and disarmed:
// 3 % of a small create's CPU). *due must not change until the deadline is replaced
// or cleared, other than by the goroutine that reads the body.
func (c *limitedConn) setBodyDeadline(due *time.Time) { c.bodyDue.Store(due) }

// clearBodyDeadline drops a body deadline not yet set, and clears one that Read set.
func (c *limitedConn) clearBodyDeadline() {
	c.bodyDue.Store(nil)
	if c.bodySet.Load() {
		c.SetReadDeadline(time.Time{})
	}
}

// SetReadDeadline replaces a body's deadline, set or not yet set: net/http clears the
// read deadline (startBackgroundRead) before it reads in the background, once a body
// is read, and that read must not set the body's deadline.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	c.dropBodyDeadline()
	return c.setRead(t, false)
}

// dropBodyDeadline forgets a body's deadline, set or not yet set, without a store
// where there is none (most calls: an atomic store is an exchange on amd64).
func (c *limitedConn) dropBodyDeadline() {
	if c.bodyDue.Load() != nil {
		c.bodyDue.Store(nil)
	}
	if c.bodySet.Load() {
		c.bodySet.Store(false)
	}
}

// SetDeadline is SetReadDeadline and SetWriteDeadline.
func (c *limitedConn) SetDeadline(t time.Time) error {
	c.dropBodyDeadline()
	return c.setRead(t, true)
}

// Read marks, on an idle keep-alive connection, when the next request started
// arriving: from then on its headers have the header timeout, not the idle one.
func (c *limitedConn) Read(b []byte) (int, error) {
	if due := c.bodyDue.Load(); due != nil && c.bodyDue.CompareAndSwap(due, nil) {
		if err := c.setRead(*due, false); err != nil {
			return 0, err
		}
		c.bodySet.Store(true)
	}
	n, err := c.Conn.Read(b)
	if n > 0 && http.ConnState(c.state.Load()) == http.StateIdle && c.reading.Load() == 0 {
		c.reading.Store(c.l.now.Load())
	}
	return n, err
}

// Write marks the write under way for the janitor, which closes the connection when
// its client takes none of the bytes for the stall timeout.
func (c *limitedConn) Write(b []byte) (int, error) {
	c.writing.Store(c.l.now.Load())
	n, err := c.Conn.Write(b)
	c.writing.Store(0)
	return n, err
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
