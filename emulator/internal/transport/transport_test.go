package transport

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts an HTTPServer with a cap of max connections on 127.0.0.1:0.
func serve(t *testing.T, max int) (addr string, conns *Conns) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, BodyReadTimeout: 10 * time.Second, MinBodyRate: 1 << 10, WriteStallTimeout: 10 * time.Second}
	conns = newConns(max, lim)
	srv := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), lim, conns, slog.New(slog.DiscardHandler))
	go srv.Serve(conns.Listener(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), conns
}

// get sends one keep-alive request on c and reads its answer.
func get(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
}

// At the cap, a new client is served by closing a connection idle between requests.
func TestConnsEvictAnIdleConnectionAtTheCap(t *testing.T) {
	addr, conns := serve(t, 2)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		get(t, c, bufio.NewReader(c))
		held = append(held, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get(t, c, bufio.NewReader(c)) // waits, if need be, until one of the two is idle
	// the listener takes a slot before it accepts, so the next accept may already
	// have closed the other idle one too
	if n := conns.Evicted(); n < 1 || n > 2 {
		t.Fatalf("evicted %d connections, want 1 or 2", n)
	}
	if n := conns.Open(); n > 2 {
		t.Fatalf("%d connections open over a cap of 2", n)
	}
	closed := 0
	for _, h := range held {
		h.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // an open one answers nothing: the timeout only ends the look
		if _, err := h.Read(make([]byte, 1)); err != nil && !strings.Contains(err.Error(), "timeout") {
			closed++
		}
	}
	if closed == 0 {
		t.Fatal("no idle connection was closed to make room")
	}
}

// A body's deadline is the grace plus the time its bytes take at the minimum rate.
func TestBodyDeadlineMovesWithTheBytes(t *testing.T) {
	b := &rateBody{start: time.Unix(100, 0), grace: 10 * time.Second, rate: 1 << 10}
	if got, want := b.deadline(), time.Unix(110, 0); !got.Equal(want) {
		t.Fatalf("deadline before any byte: %v, want %v", got, want)
	}
	b.read = 4 << 10
	if got, want := b.deadline(), time.Unix(114, 0); !got.Equal(want) {
		t.Fatalf("deadline after 4 KiB at 1 KiB/s: %v, want %v", got, want)
	}
}

// janitorServer serves h with short header and idle timeouts kept by the janitor.
func janitorServer(t *testing.T, h http.HandlerFunc, header, idle time.Duration) (string, *Conns) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{ReadHeaderTimeout: header, IdleTimeout: idle, BodyReadTimeout: 10 * time.Second, MinBodyRate: 1 << 10, WriteStallTimeout: 10 * time.Second, MaxConnections: 64}
	conns := newConns(64, lim)
	srv := HTTPServer(h, lim, conns, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go conns.Run(done)
	go srv.Serve(conns.Listener(ln))
	t.Cleanup(func() { close(done); srv.Close() })
	return ln.Addr().String(), conns
}

// waitClosed reads until the server closes c (or a generous limit passes).
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("not closed by the server: %v", err)
	}
}

// The janitor keeps the header timeout for a new connection and for a keep-alive's
// next request once it starts arriving, and the idle timeout otherwise; a request
// being served, however long, is not cut.
func TestJanitorTimeouts(t *testing.T) {
	slow, started := make(chan struct{}), make(chan struct{})
	addr, conns := janitorServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-slow
		}
		io.WriteString(w, "ok")
	}, 100*time.Millisecond, time.Hour)

	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	waitClosed(t, silent) // new, no headers: the header timeout

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get(t, c, bufio.NewReader(c))
	io.WriteString(c, "GET / HTTP/1.1\r\n") // the next request starts, and stalls
	waitClosed(t, c)                        // within the header timeout, not the hour's idle one

	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	witness, err := net.Dial("tcp", addr) // its timing out shows a header timeout went by
	if err != nil {
		t.Fatal(err)
	}
	defer witness.Close()
	waitClosed(t, witness)
	close(slow)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a request served past the header timeout: %v %v", resp, err)
	}
	if n := conns.TimedOut(); n != 3 {
		t.Fatalf("%d connections timed out, want 3", n)
	}
}

// An idle keep-alive connection is closed at the idle timeout.
func TestJanitorIdleTimeout(t *testing.T) {
	addr, conns := janitorServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, time.Hour, 100*time.Millisecond)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get(t, c, bufio.NewReader(c))
	waitClosed(t, c)
	if n := conns.TimedOut(); n != 1 {
		t.Fatalf("%d connections timed out, want 1", n)
	}
}

// Clients that stop reading a large answer, more of them than the cap, and each back as
// soon as it is cut, do not keep a normal client waiting for the janitor's stall
// timeout: at the cap the writer blocked the longest is closed as soon as it counts as
// stalled (a tenth of the stall timeout), however many there are, so no slot waits for
// the janitor (issue 32 item 6:
// --max-connections 16 and 40 such clients had a normal GET wait up to 26.5 s). The
// load is bounded: it stops with the last normal request.
func TestConnsEvictStalledWritersAtTheCap(t *testing.T) {
	const (
		capacity  = 16
		attackers = 40
		requests  = 6
		stall     = 10 * time.Second // the default: a write counts as stalled after 1 s
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, BodyReadTimeout: 10 * time.Second, MinBodyRate: 1 << 10, WriteStallTimeout: stall}
	conns := newConns(capacity, lim)
	cut := make([]chan struct{}, attackers) // attacker i's answer was cut: it comes back
	for i := range cut {
		cut[i] = make(chan struct{}, 1)
	}
	chunk := make([]byte, 32<<10)
	srv := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			io.WriteString(w, "ok")
			return
		}
		var i int
		fmt.Sscan(r.URL.Query().Get("i"), &i)
		for range 2048 { // 64 MiB: far more than the sockets' buffers take
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		select {
		case cut[i] <- struct{}{}:
		default:
		}
	}), lim, conns, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go conns.Run(done)
	go srv.Serve(conns.Listener(ln))
	defer func() { close(done); srv.Close() }()
	addr := ln.Addr().String()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				c.(*net.TCPConn).SetReadBuffer(4 << 10)
				fmt.Fprintf(c, "GET /big?i=%d HTTP/1.1\r\nHost: x\r\n\r\n", i) // and never read
				select {
				case <-cut[i]:
					c.Close()
				case <-stop:
					c.Close()
					return
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	// a normal client: a new connection a request; the timeout only ends a failed run
	// (the assertion is on what made room, below, not on time)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	var took []time.Duration
	for range requests {
		start := time.Now()
		res, err := client.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("a normal GET among %d stalled readers at a cap of %d: %v (after %d answered)", attackers, capacity, err, len(took))
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("%d normal GETs among %d stalled readers, cap %d, stall timeout %s: p50 %s, max %s; %d evicted, %d closed by the stall timeout",
		requests, attackers, capacity, stall, took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), conns.Evicted(), conns.StallClosed())
	// room was made by evicting stalled writers at a tenth of the stall timeout, not by
	// waiting for the janitor to close them at the whole of it: before the fix, 0 were
	// evicted and 160 closed by the timeout. On a loaded machine (the whole suite under
	// -race on 2 cores) a few writers may still reach the timeout before an accept comes
	// to evict them: what is held is that eviction made nearly all the room.
	if ev, sc := conns.Evicted(), conns.StallClosed(); ev == 0 || sc*4 > ev {
		t.Errorf("%d stalled writers evicted, %d closed by the stall timeout: want room made by eviction (at least 4 to 1)", ev, sc)
	}
}

// BodyDeadline hands its handler a copy of the server's request, which Copied
// recognises (so the pipeline changes it in place, without a copy of its own), while
// the server's own request keeps its body; a request without a body, or not the copy,
// is not Copied.
func TestBodyDeadlineCopy(t *testing.T) {
	type seen struct {
		copied, origCopied, ownBodyKept bool
		body                            string
	}
	got := make(chan seen, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s seen
		s.copied = Copied(r)
		if r.Body != nil && r.Body != http.NoBody {
			orig := r.Body.(*rateBody).ReadCloser
			other := *r // a copy of the copy is not it
			s.origCopied = Copied(&other)
			r.Body = io.NopCloser(r.Body) // what the pipeline does in place
			b, _ := io.ReadAll(r.Body)
			s.body = string(b)
			s.ownBodyKept = orig != r.Body
		}
		got <- s
	})
	addr, _ := janitorServer(t, func(w http.ResponseWriter, r *http.Request) {
		BodyDeadline(h, time.Second, 1<<10).ServeHTTP(w, r)
	}, 5*time.Second, 5*time.Second)
	for _, body := range []string{"hello", ""} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(body))
		if body == "" {
			req.Body = http.NoBody
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s := <-got
		if want := body != ""; s.copied != want || s.origCopied || s.body != body || s.ownBodyKept != want {
			t.Errorf("body %q: %+v", body, s)
		}
	}
	if Copied(&http.Request{Body: http.NoBody}) {
		t.Error("a request of no listener is Copied")
	}
}

// recordingListener's connections count the read deadlines set on them other than the
// zero time and net/http's "long ago" (time.Unix(1, 0)), which stops a read under way:
// what arms a runtime timer for a body.
type recordingListener struct {
	net.Listener
	armed *atomic.Int64
}

func (l recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return recordingConn{c, l.armed}, nil
}

type recordingConn struct {
	net.Conn
	armed *atomic.Int64
}

func (c recordingConn) SetReadDeadline(t time.Time) error {
	if t.After(time.Unix(1<<30, 0)) {
		c.armed.Add(1)
	}
	return c.Conn.SetReadDeadline(t)
}

// On a connection of Conns a body's deadline is set by the connection's next read: a
// body that came with the request's head (in net/http's buffer) arms no timer, one
// read from the connection is read under its deadline, and the deadline ends with its
// request, read to its end or not, so the next request on the connection is not
// under it. The grace is a nanosecond: any read under a body's deadline fails at once.
func TestBodyDeadlineSetByTheConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, BodyReadTimeout: time.Nanosecond, MinBodyRate: 1, WriteStallTimeout: 10 * time.Second}
	conns := newConns(8, lim)
	srv := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/skip" { // answers without reading the body
			io.WriteString(w, "skipped")
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			fmt.Fprintf(w, "error %v", err)
			return
		}
		fmt.Fprintf(w, "got %q", b)
	}), lim, conns, slog.New(slog.DiscardHandler))
	var armed atomic.Int64
	go srv.Serve(conns.Listener(recordingListener{ln, &armed}))
	t.Cleanup(func() { srv.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	ask := func(req, want string) {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Fatalf("%q: answered %d %q, want %q", req, resp.StatusCode, b, want)
		}
	}
	// the head and the body in one write: read from net/http's buffer
	ask("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", `got "hello"`)
	if n := armed.Load(); n != 0 {
		t.Errorf("%d read deadlines set for a body that came with its head", n)
	}
	ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n", `got ""`)
	ask("POST /skip HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "skipped")
	ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n", `got ""`)
	// a body still to come is read from the connection, under its (past) deadline
	ask("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", "timeout")
}

// A request over HTTP/2 (h2c, prior knowledge) has its body's deadline set on the
// response at once, as a server of the caller's does: the connection's reads are
// the HTTP/2 server's, not the body's.
func TestBodyDeadlineHTTP2(t *testing.T) {
	got := make(chan bool, 1)
	addr, _ := janitorServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, ok := r.Body.(*rateBody)
		got <- ok && b.conn == nil && r.ProtoMajor == 2
		io.ReadAll(r.Body)
	}, 5*time.Second, 5*time.Second)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	resp, err := client.Post("http://"+addr+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !<-got {
		t.Error("an HTTP/2 body's deadline not set on the response")
	}
}
