package transport

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"
)

// deadlineConn is a net.Conn that keeps its read deadline and counts the calls that
// set it.
type deadlineConn struct {
	net.Conn
	mu    sync.Mutex
	read  time.Time
	calls int
}

func (d *deadlineConn) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.read, d.calls = t, d.calls+1
	return nil
}

func (d *deadlineConn) SetDeadline(t time.Time) error { return d.SetReadDeadline(t) }

func (d *deadlineConn) Read(b []byte) (int, error) { return 0, nil }

// Whatever the order of deadlines set, cleared, set by a body's read or by
// SetDeadline, the connection's read deadline is the last one set through the
// wrapper, and clearing a deadline already none makes no call.
func TestReadDeadlineClearedOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		d := &deadlineConn{}
		c := &limitedConn{Conn: d}
		var want time.Time
		for step := range 50 {
			var t0 time.Time
			if rng.IntN(2) == 0 {
				t0 = time.Unix(int64(rng.IntN(3)), 0) // a deadline; Unix(0) is long ago
			}
			switch op := rng.IntN(4); op {
			case 0, 1:
				c.SetReadDeadline(t0)
			case 2:
				c.SetDeadline(t0)
			case 3: // a body's deadline, set by the next Read
				if t0.IsZero() {
					t0 = time.Unix(5, 0)
				}
				c.setBodyDeadline(&t0)
				c.Read(nil)
			}
			want = t0
			if !d.read.Equal(want) {
				t.Fatalf("run %d step %d: read deadline %v, want %v", run, step, d.read, want)
			}
		}
	}
	d := &deadlineConn{}
	c := &limitedConn{Conn: d}
	for range 5 {
		c.SetReadDeadline(time.Time{})
	}
	if d.calls != 1 {
		t.Errorf("five clearings made %d calls, want 1", d.calls)
	}
	c.SetReadDeadline(time.Unix(1, 0))
	c.SetReadDeadline(time.Time{})
	c.SetReadDeadline(time.Time{})
	if d.calls != 3 || !d.read.IsZero() {
		t.Errorf("set, clear, clear: %d calls, deadline %v; want 3, none", d.calls, d.read)
	}
}

// Through a real server: requests on one keep-alive connection are answered one after
// the other (the background read's wake-up, a deadline long ago, is cleared before the
// next request is read), on that one connection: a client retries a GET on a new
// connection when a reused one fails, which would hide a wake-up left uncleared.
func TestReadDeadlineKeepAlive(t *testing.T) {
	lim := Limits{ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, BodyReadTimeout: time.Minute, MinBodyRate: 1, WriteStallTimeout: time.Minute}
	conns := newConns(8, lim)
	srv := HTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }), lim, conns, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(conns.Listener(ln))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := range 50 {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
		reused := false
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}))
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, res.Body) // read to its end, or the client keeps no connection
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, res.StatusCode)
		}
		if i > 0 && !reused {
			t.Fatalf("request %d: on a new connection", i)
		}
	}
}
