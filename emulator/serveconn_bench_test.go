package emulator

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/gctune"
	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

// BenchmarkServeConn measures the server's side of GET /v1/deployments/{id} as the
// binary serves it (hostemu: emulator.Listen's http.Server, the connection cap's
// listener, the default world on a real clock with rate limits counted, gctune as
// `hostemu serve` starts it) against bare gin under a plain http.Server (as baregin
// serves it), both reading the request loadgen sends from a connection in memory:
// net/http's reading, the handler, and the header and body writing are all there, the
// syscalls and the client are not. Each request is sent once the answer to the one
// before was written, as a keep-alive client sends them. Beside ns/op it reports the
// process's CPU time a request (cpu-ns/op), which the shared machine's load disturbs
// less; run it at GOMAXPROCS=1:
//
//	GOMAXPROCS=1 go test -run '^$' -bench ServeConn -benchtime 200000x -count 3 ./emulator/
func BenchmarkServeConn(b *testing.B) {
	s := benchServer(b)
	get := func(path string) []byte {
		req, _ := http.NewRequest("GET", s.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+bare.ReadToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			b.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
		}
		return body
	}
	m := regexp.MustCompile(`"id":"(dpl_[^"]+)"`).FindSubmatch(get("/v1/deployments?limit=1"))
	if m == nil {
		b.Fatal("no deployment in the default fixtures")
	}
	path := "/v1/deployments/" + string(m[1])
	body := get(path)
	raw := []byte("GET " + path + " HTTP/1.1\r\nHost: " + strings.TrimPrefix(s.URL(), "http://") + "\r\nAuthorization: Bearer " + bare.ReadToken + "\r\n\r\n")

	benchServeConn(b, raw, s, bare.New(body), func(answer []byte) bool {
		return bytes.HasPrefix(answer, []byte("HTTP/1.1 200 ")) && bytes.HasSuffix(answer, body)
	})
}

// BenchmarkServeConnCreate is BenchmarkServeConn of POST /v1/deployments, the create
// TestBinaryHotPaths sends (one file, uploaded first, and one environment variable),
// against the reference's create (package bare): every request creates a deployment,
// so both worlds grow as the benchmark runs, and hostemu's lifecycles (queued →
// building 1 s after each create, ready 5 s later) run on its real clock in the same
// process, counted in cpu-ns/op as far as they fall within the run:
//
//	GOMAXPROCS=1 go test -run '^$' -bench ServeConnCreate -benchtime 100000x -count 3 ./emulator/
func BenchmarkServeConnCreate(b *testing.B) {
	s := benchServer(b)
	site := []byte("<!doctype html><h1>Hello</h1>")
	digest := fmt.Sprintf("%x", sha256.Sum256(site))
	req, _ := http.NewRequest("POST", s.URL()+"/v1/files", bytes.NewReader(site))
	req.Header.Set("Authorization", "Bearer "+bare.DeployToken)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-File-Digest", digest)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		b.Fatalf("upload: %d", res.StatusCode)
	}
	body := `{"project_id":"` + bare.Project + `","files":{"index.html":"` + digest + `"},"target":"preview","env":{"FEATURE":"on"}}`
	raw := []byte("POST /v1/deployments HTTP/1.1\r\nHost: " + strings.TrimPrefix(s.URL(), "http://") +
		"\r\nAuthorization: Bearer " + bare.DeployToken + "\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	benchServeConn(b, raw, s, bare.New(nil), func(answer []byte) bool {
		return bytes.HasPrefix(answer, []byte("HTTP/1.1 201 ")) && bytes.Contains(answer, []byte(`"status":"queued"`))
	})
}

// benchServer is hostemu as `hostemu serve` builds it (rate limits off, as the binary
// harness runs it), serving on 127.0.0.1 until the benchmark ends.
func benchServer(b *testing.B) *Server {
	s, err := Listen(Options{Addr: "127.0.0.1:0", RateLimitsOff: true})
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// benchServeConn serves raw, b.N times over one connection in memory, by hostemu (s's
// server as `hostemu serve` builds it) and by the reference ref under a plain
// http.Server, as two sub-benchmarks; want checks the first answer of each.
func benchServeConn(b *testing.B, raw []byte, s *Server, ref http.Handler, want func(answer []byte) bool) {
	defer gctune.Start(gctune.DefaultHeadroom)() // as `hostemu serve` starts it (a GOGC you set is kept)
	for _, side := range []struct {
		name  string
		serve func(net.Listener) error
	}{
		{"hostemu", func(ln net.Listener) error { return s.http.Serve(s.conns.Listener(ln)) }},
		{"bare-gin", func(ln net.Listener) error { return (&http.Server{Handler: ref}).Serve(ln) }},
	} {
		b.Run(side.name, func(b *testing.B) {
			c := newMemConn(raw, b.N+1)
			ln := &oneConnListener{conn: c, closed: make(chan struct{})}
			go side.serve(ln)
			c.awaitAnswer() // the first request, outside the timing
			if !want(c.last) {
				ln.Close()
				c.Close()
				b.Fatalf("answer:\n%s", c.last)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuNanos()
			c.release()
			<-c.done
			b.StopTimer()
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
			ln.Close()
		})
	}
}

// cpuNanos is the process's user and system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// memConn is a keep-alive client in memory: it sends req n times, each once the
// answer to the one before was written, then reads EOF.
type memConn struct {
	req []byte

	mu       sync.Mutex
	cond     *sync.Cond
	left     int  // requests still to send
	answered bool // the last request sent was answered (or none was sent)
	pending  []byte
	expired  bool // the read deadline is in the past
	closed   bool
	held     bool   // the first request's answer is awaited (awaitAnswer)
	last     []byte // the first answer, for a check
	first    bool
	done     chan struct{}
}

func newMemConn(req []byte, n int) *memConn {
	c := &memConn{req: req, left: n, answered: true, first: true, held: true, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// awaitAnswer waits for the first answer; the next request is held until release.
func (c *memConn) awaitAnswer() {
	c.mu.Lock()
	for c.first {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

func (c *memConn) release() {
	c.mu.Lock()
	c.held = false
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closed:
			return 0, net.ErrClosed
		case len(c.pending) > 0:
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		case c.expired:
			return 0, os.ErrDeadlineExceeded
		case c.answered && c.left == 0:
			return 0, io.EOF
		case c.answered && (c.first || !c.held):
			c.left--
			c.answered = false
			n := copy(p, c.req)
			c.pending = c.req[n:]
			return n, nil
		}
		c.cond.Wait()
	}
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first {
		c.last = append(c.last, p...)
		if !wholeAnswer(c.last) {
			return len(p), nil // not the whole answer yet
		}
		c.first = false
	}
	c.answered = true
	c.cond.Broadcast()
	return len(p), nil
}

// wholeAnswer reports whether b holds a whole answer to a GET: its head and the body
// its head announces, whatever they are (the benchmark checks them).
func wholeAnswer(b []byte) bool {
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		return false
	}
	_, err = io.Copy(io.Discard, res.Body)
	return err == nil
}

func (c *memConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.done)
		c.cond.Broadcast()
	}
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expired = !t.IsZero() && !t.After(time.Now())
	c.cond.Broadcast()
	return nil
}

func (c *memConn) SetDeadline(t time.Time) error    { return c.SetReadDeadline(t) }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "tcp" }
func (memAddr) String() string  { return "127.0.0.1:40000" }

// oneConnListener accepts its one connection, then waits to be closed.
type oneConnListener struct {
	conn   net.Conn
	once   sync.Once
	closed chan struct{}
	taken  bool
	mu     sync.Mutex
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.taken {
		l.taken = true
		l.mu.Unlock()
		return l.conn, nil
	}
	l.mu.Unlock()
	<-l.closed
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return memAddr{} }

// The first answer ends memConn's wait whatever it is (a 500, another body): the
// benchmark then fails on it, where waiting for the wanted bytes hung it until the test
// binary's timeout.
func TestMemConnEndsOnAnyFirstAnswer(t *testing.T) {
	t.Parallel()
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, tc := range []struct {
		name   string
		writes []string
	}{
		{"the wanted answer in two writes", []string{"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nwan", "ted"}},
		{"another status", []string{"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\n", "error"}},
		{"another body", []string{"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nother!"}},
		{"chunked", []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "0\r\n\r\n"}},
	} {
		c := newMemConn(req, 2)
		if n, err := c.Read(make([]byte, 64)); n != len(req) || err != nil {
			t.Fatalf("%s: the first request: %d bytes, %v", tc.name, n, err)
		}
		for i, w := range tc.writes {
			c.Write([]byte(w))
			c.mu.Lock()
			first := c.first
			c.mu.Unlock()
			if last := i == len(tc.writes)-1; first == last {
				t.Fatalf("%s: after write %d of %d, the first answer ended: %v, want %v", tc.name, i+1, len(tc.writes), !first, last)
			}
		}
		c.awaitAnswer()
		if string(c.last) != strings.Join(tc.writes, "") {
			t.Errorf("%s: the first answer kept: %q", tc.name, c.last)
		}
	}
}
