package emulator_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// listenEnv starts a real server (with its timeouts and connection cap) on loopback.
func listenEnv(t testing.TB, lim emulator.Limits) (*emulator.Server, *env) {
	t.Helper()
	srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, &env{t: t, emu: srv.Emulator(), url: srv.URL()}
}

// rawConn is a hand-driven client connection, to send half requests and watch closes.
type rawConn struct {
	t testing.TB
	net.Conn
	r *bufio.Reader
}

func dial(t testing.TB, srv *emulator.Server) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second)) // a failing test ends, never hangs
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) response() resp {
	c.t.Helper()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// waitClosed blocks until the server closes the connection.
func (c *rawConn) waitClosed() {
	c.t.Helper()
	if n, err := c.r.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("connection still open: read %d bytes, %v", n, err)
	}
}

func uploadHead(digest string, length int) string {
	return fmt.Sprintf("POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t-deploy\r\nX-File-Digest: %s\r\nContent-Length: %d\r\n\r\n", digest, length)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func mustEnvelope(t testing.TB, r resp, status int, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Code, Message string
			DocURL        string `json:"doc_url"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != status || e.Error.Code != code || e.Error.Message == "" || !strings.HasSuffix(e.Error.DocURL, "/docs/errors/"+code) {
		t.Fatalf("got %d %s; want %d %s in the envelope", r.Status, r.Body, status, code)
	}
}

// 1,000 GETs with a 900 KB query once took 1.56 GB: the journal keeps at most its caps
// of path and query, and flags the cut.
func TestJournalBoundedInBytes(t *testing.T) {
	t.Parallel()
	const n = 20
	e := newEnv(t, func(o *emulator.Options) { o.JournalSize = n })
	huge := strings.Repeat("q", 900<<10)
	for i := range n {
		e.get(fmt.Sprintf("/v1/projects/%d%s?%s", i, strings.Repeat("p", 8<<10), huge), "t-read")
	}
	r := e.get("/_emulator/requests", "")
	mustStatus(t, r, 200)
	if max := n * journal.MaxEntryBytes; int64(len(r.Body)) > max {
		t.Errorf("dump of %d entries is %d bytes, over %d", n, len(r.Body), max)
	}
	var dump struct{ Requests []journal.Entry }
	if err := json.Unmarshal(r.Body, &dump); err != nil || len(dump.Requests) != n {
		t.Fatalf("dump: %v, %d entries", err, len(dump.Requests))
	}
	for _, en := range dump.Requests {
		if len(en.Query) != journal.MaxQuery || !en.QueryTruncated || len(en.Path) != journal.MaxPath || !en.PathTruncated {
			t.Fatalf("entry keeps path %d bytes (truncated %v), query %d (truncated %v)", len(en.Path), en.PathTruncated, len(en.Query), en.QueryTruncated)
		}
	}
	if held, max := emulator.World(e.emu).JournalBytes(), int64(n)*journal.MaxEntryBytes; held > max {
		t.Errorf("journal holds %d bytes, over %d", held, max)
	}
	if got := e.get("/_emulator/requests?path=/v1/projects/1*", "").JSON(t)["requests"].([]any); len(got) != 11 { // 1, 10 to 19
		t.Errorf("filtered dump has %d entries", len(got))
	}
}

// PUT /_emulator/state is bounded, refuses anything but one object, and a refused body
// changes nothing.
func TestStateImportBounds(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	e := newEnv(t, func(o *emulator.Options) { o.Limits.MaxStateBytes = max })
	before := e.get("/_emulator/state", "")
	mustStatus(t, before, 200)
	good := string(before.Body)
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"whitespace over the limit", strings.Repeat(" ", 2*max), 413, "payload_too_large"},
		{"state padded over the limit", good + strings.Repeat("\n", max), 413, "payload_too_large"},
		{"leading garbage", "x" + good, 400, "invalid_json"},
		{"trailing garbage", good + "x", 400, "invalid_json"},
		{"two states", good + good, 400, "invalid_json"},
		{"an array", "[" + good + "]", 400, "invalid_request"},
		{"only whitespace", "   \n ", 400, "invalid_request"},
		{"cut", good[:len(good)/2], 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: tt.body})
			mustEnvelope(t, r, tt.status, tt.code)
			if after := string(e.get("/_emulator/state", "").Body); after != good {
				t.Fatal("a refused state changed the world")
			}
		})
	}
	r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: " \n" + good + "\n "})
	mustStatus(t, r, 200)
	if string(r.Body) != good {
		t.Error("PUT state answers something else than the state")
	}
	r = e.do(req{Method: "PUT", Path: "/_emulator/state", Body: good, Headers: map[string]string{"Content-Type": "text/plain"}})
	mustEnvelope(t, r, 415, "unsupported_media_type")
}

// The body budget: an upload that would go over it gets 503 with Retry-After, the bytes
// come back when a request ends, and the same upload then succeeds.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	srv, e := listenEnv(t, emulator.Limits{MaxBodyBytesInFlight: 1 << 20})
	ctx := t.Context()

	held := make([]byte, 600<<10)
	slow := dial(t, srv)
	slow.send(uploadHead(digest(held), len(held)))
	slow.Write(held[:300<<10]) // and stalls, holding its buffer
	if _, err := emulator.WaitBodyBytesInFlight(ctx, e.emu, func(n int64) bool { return n >= 300<<10 }); err != nil {
		t.Fatal(err)
	}

	body := make([]byte, 800<<10)
	upload := func() resp {
		return e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: body,
			Headers: map[string]string{"X-File-Digest": digest(body), "Content-Type": "application/octet-stream"}})
	}
	r := upload()
	mustEnvelope(t, r, 503, "service_unavailable")
	if r.Header.Get("Retry-After") != "1" || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("503 headers: Retry-After %q, X-RateLimit-Limit %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Limit"))
	}

	slow.Close()
	if _, err := emulator.WaitBodyBytesInFlight(ctx, e.emu, func(n int64) bool { return n == 0 }); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, upload(), 201)
}

// Concurrent uploads over the budget each get 201 or 503, never more memory, and all
// of the budget comes back.
func TestBodyBudgetConcurrent(t *testing.T) {
	t.Parallel()
	_, e := listenEnv(t, emulator.Limits{MaxBodyBytesInFlight: 4 << 20})
	body := make([]byte, 1<<20)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 16 {
		wg.Go(func() {
			r := e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: body,
				Headers: map[string]string{"X-File-Digest": digest(body), "Content-Type": "application/octet-stream"}})
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[201]+statuses[503] != 16 || statuses[201] == 0 {
		t.Errorf("statuses %v; want only 201 and 503, some 201", statuses)
	}
	if _, err := emulator.WaitBodyBytesInFlight(t.Context(), e.emu, func(n int64) bool { return n == 0 }); err != nil {
		t.Fatal(err)
	}
}

func TestIdleConnectionsClosed(t *testing.T) {
	t.Parallel()
	srv, _ := listenEnv(t, emulator.Limits{IdleTimeout: 100 * time.Millisecond, ReadHeaderTimeout: 100 * time.Millisecond})
	t.Run("keep-alive after a request", func(t *testing.T) {
		c := dial(t, srv)
		c.send("GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		mustStatus(t, c.response(), 200)
		c.waitClosed()
	})
	t.Run("silent", func(t *testing.T) {
		dial(t, srv).waitClosed()
	})
	t.Run("half a header", func(t *testing.T) {
		c := dial(t, srv)
		c.send("GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		c.waitClosed()
	})
}

func TestStalledUploadCut(t *testing.T) {
	t.Parallel()
	srv, _ := listenEnv(t, emulator.Limits{BodyReadTimeout: 200 * time.Millisecond, MinBodyRate: 64 << 10})
	body := make([]byte, 1<<20)
	c := dial(t, srv)
	c.send(uploadHead(digest(body), len(body)))
	c.Write(body[:1024]) // and stalls
	mustEnvelope(t, c.response(), 400, "invalid_request")
	c.waitClosed()
}

// A slow upload that keeps moving faster than the minimum rate completes, well past
// the grace period. Each 16 KiB chunk buys a second at the minimum rate and comes 40 ms
// after the one before (0.6 s in all, six times the grace): a machine under load may
// be late with a chunk by most of a second without failing the test (at 64 KiB/s and
// the first chunk 40 ms after the head, a CI run's load cut it at its start).
func TestSlowUploadCompletes(t *testing.T) {
	t.Parallel()
	srv, _ := listenEnv(t, emulator.Limits{BodyReadTimeout: 100 * time.Millisecond, MinBodyRate: 16 << 10})
	body := make([]byte, 256<<10)
	c := dial(t, srv)
	c.send(uploadHead(digest(body), len(body)) + string(body[:16<<10])) // the first chunk with its head
	tick := time.NewTicker(40 * time.Millisecond)                       // 16 KiB per 40 ms: 400 KiB/s
	defer tick.Stop()
	for chunk := 1; chunk < 16; chunk++ {
		<-tick.C
		c.Write(body[chunk*(16<<10) : (chunk+1)*(16<<10)])
	}
	mustStatus(t, c.response(), 201)
}

// At the connection cap, the connection idle the longest makes room: a new client is
// served at once.
func TestConnectionCapClosesIdleFirst(t *testing.T) {
	t.Parallel()
	const max = 8
	srv, e := listenEnv(t, emulator.Limits{MaxConnections: max})
	var conns []*rawConn
	for range max {
		c := dial(t, srv)
		c.send("GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		mustStatus(t, c.response(), 200)
		conns = append(conns, c)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Get(e.url + "/v1/projects")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// One of the idle connections made room. Which one is the server's to say: a
	// connection turns idle only after its answer is written, so under load the order
	// in which they turned idle need not be the order the test dialled them.
	// The eviction happened before the new client was served, so the closed one reads
	// EOF at once; the short deadline only ends the reads of those left open.
	closed := make(chan int, max)
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Second))
		go func() {
			if _, err := c.r.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				closed <- i
				return
			}
			closed <- -1
		}()
	}
	evicted := 0
	for range conns {
		if <-closed >= 0 {
			evicted++
		}
	}
	if evicted < 1 || emulator.Evicted(srv) < 1 {
		t.Errorf("%d idle connections closed (server says %d)", evicted, emulator.Evicted(srv))
	}
}

// At the cap with no idle connection (all sending headers slowly), a new client waits
// for the header timeout to free a slot, and is served.
func TestConnectionCapWaitsForASlot(t *testing.T) {
	t.Parallel()
	const max = 4
	srv, e := listenEnv(t, emulator.Limits{MaxConnections: max, ReadHeaderTimeout: 300 * time.Millisecond})
	var conns []*rawConn
	for range max {
		c := dial(t, srv)
		c.send("GET /_emulator/health HTTP/1.1\r\n")
		conns = append(conns, c)
	}
	res, err := (&http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}).Get(e.url + "/_emulator/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	for _, c := range conns {
		c.waitClosed()
	}
}

// Clients that stop reading hold no slot for long: a write their client takes none of
// for WriteStallTimeout closes the connection, and at the cap a connection stalled for a
// tenth of it makes room like an idle one. Twelve clients asking for an 8 MiB file and
// reading nothing must not lock a normal client out of a server capped at eight.
func TestConnectionCapUnderSlowReaders(t *testing.T) {
	t.Parallel()
	const max = 8
	srv, e := listenEnv(t, emulator.Limits{MaxConnections: max, WriteStallTimeout: 400 * time.Millisecond})
	big := bytes.Repeat([]byte("hostemu "), 1<<20) // 8 MiB
	up, _ := http.NewRequest("POST", e.url+"/v1/files", bytes.NewReader(big))
	up.Header.Set("Authorization", "Bearer t-deploy")
	up.Header.Set("X-File-Digest", digest(big))
	if res, err := http.DefaultClient.Do(up); err != nil || res.StatusCode != 201 {
		t.Fatalf("upload: %v %v", res, err)
	}
	created := decode[struct{ ID, URL string }](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop",
		"files": map[string]string{"index.html": digest(big)}}))
	mustStatus(t, e.post("/_emulator/await", "", map[string]string{"deployment": created.ID, "status": "ready"}), 200)
	h := host(t, created.URL)
	for range max + 4 {
		c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.(*net.TCPConn).SetReadBuffer(4096)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+h+"\r\n\r\n") // and never read
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Get(e.url + "/_emulator/health")
	if err != nil {
		t.Fatalf("a normal client behind %d slow readers: %v", max+4, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || emulator.Evicted(srv)+emulator.StallClosed(srv) == 0 {
		t.Fatalf("status %d; evicted %d, closed as stalled %d", res.StatusCode, emulator.Evicted(srv), emulator.StallClosed(srv))
	}
}

// CONNECT tunnels count against the cap and, idle between requests, make room like idle
// keep-alives: twelve idle tunnels must not lock a normal client out of a server capped
// at eight.
func TestConnectionCapUnderIdleTunnels(t *testing.T) {
	t.Parallel()
	const max = 8
	srv, e := listenEnv(t, emulator.Limits{MaxConnections: max})
	var tunnels []*rawConn
	for range max {
		c := dial(t, srv)
		c.send("CONNECT shop.test:80 HTTP/1.1\r\nHost: shop.test:80\r\n\r\n")
		if line, err := c.r.ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
			t.Fatalf("CONNECT: %q %v", line, err)
		}
		c.r.ReadString('\n') // the blank line
		c.send("GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n")
		mustStatus(t, c.response(), 200)
		tunnels = append(tunnels, c) // idle from now on
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Get(e.url + "/_emulator/health")
	if err != nil {
		t.Fatalf("a normal client behind %d idle tunnels: %v", max, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || emulator.Evicted(srv) == 0 {
		t.Fatalf("status %d, evicted %d", res.StatusCode, emulator.Evicted(srv))
	}
	closedc := make(chan bool, len(tunnels))
	for _, c := range tunnels {
		c.SetReadDeadline(time.Now().Add(time.Second))
		go func() {
			_, err := c.r.Read(make([]byte, 1))
			closedc <- err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
		}()
	}
	closed := 0
	for range tunnels {
		if <-closedc {
			closed++
		}
	}
	if closed == 0 {
		t.Fatal("no idle tunnel was closed to make room")
	}
}
