package transport

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
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
	conns = newConns(max, 10*time.Second)
	lim := Limits{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, BodyReadTimeout: 10 * time.Second, MinBodyRate: 1 << 10}
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
