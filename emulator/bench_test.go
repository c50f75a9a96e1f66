package emulator_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// BenchmarkGetDeployment compares GET /v1/deployments/{id} through hostemu's whole
// middleware chain (auth, rate limit, faults, journal, JSON) with a bare gin handler
// that returns the same bytes, in-process and over loopback HTTP.
func BenchmarkGetDeployment(b *testing.B) {
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	get := func(h http.Handler) []byte {
		r := httptest.NewRequest("GET", "/v1/deployments/dpl_first", nil)
		r.Header.Set("Authorization", "Bearer t-read")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	body := get(h)
	bare := gin.New()
	bare.GET("/v1/deployments/:id", func(c *gin.Context) { c.Data(200, "application/json; charset=utf-8", body) })

	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"hostemu", h}, {"bare-gin", bare}} {
		b.Run("in-process/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				get(bc.h)
			}
		})
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"hostemu", h}, {"bare-gin", bare}} {
		b.Run("loopback/"+bc.name, func(b *testing.B) {
			srv := httptest.NewServer(bc.h)
			defer srv.Close()
			client := srv.Client()
			req, _ := http.NewRequest("GET", srv.URL+"/v1/deployments/dpl_first", nil)
			req.Header.Set("Authorization", "Bearer t-read")
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
		})
	}
}

// bigWorld is an emulator holding n deployments of one project.
func bigWorld(b *testing.B, n int) *emulator.Emulator {
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true, JournalSize: 10})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	snap := emulator.World(e).Export()
	for i := 0; i < n; i++ {
		at := testStart.Add(-time.Duration(i) * time.Second)
		snap.Deployments = append(snap.Deployments, state.Deployment{
			ID: fmt.Sprintf("dpl_bench%07d", i), ProjectID: "prj_blog", URL: fmt.Sprintf("https://blog-%07d.hostemu.localhost", i), Target: "preview",
			Status: "ready", CreatedAt: at, Timings: state.Timings{QueuedAt: &at, BuildingAt: &at, ReadyAt: &at}, Files: map[string]string{},
		})
	}
	if err := emulator.World(e).Import(snap); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkListDeep compares the first page of 100,000 deployments with a page deep
// into them (after 90,000): the cursor seeks, it does not scan.
func BenchmarkListDeep(b *testing.B) {
	e := bigWorld(b, 100_000)
	h := e.Handler()
	get := func(url string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", url, nil)
		r.Header.Set("Authorization", "Bearer t-read")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return w
	}
	for _, scope := range []string{"", "project_id=prj_blog&"} {
		// walk 900 pages of 100 to get a cursor 90,000 deep
		cursor := ""
		for i := 0; i < 900; i++ {
			var page struct {
				NextCursor string `json:"next_cursor"`
			}
			w := get("/v1/deployments?" + scope + "limit=100&cursor=" + cursor)
			if err := jsonUnmarshal(w.Body.Bytes(), &page); err != nil {
				b.Fatal(err)
			}
			cursor = page.NextCursor
		}
		name := "all"
		if scope != "" {
			name = "project"
		}
		b.Run(name+"/first-page", func(b *testing.B) {
			for b.Loop() {
				get("/v1/deployments?" + scope + "limit=20")
			}
		})
		b.Run(name+"/page-at-90000", func(b *testing.B) {
			for b.Loop() {
				get("/v1/deployments?" + scope + "limit=20&cursor=" + cursor)
			}
		})
	}
}

// BenchmarkLoadGenerated100k: an emulator starting on fixtures that generate 100,000
// deployments. heap-MB is the live heap after a GC with the world loaded.
func BenchmarkLoadGenerated100k(b *testing.B) {
	var heap uint64
	for b.Loop() {
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/big/generate-100k.yaml", ClockMode: clock.Manual, ClockStart: testStart})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapAlloc)
		if n := len(emulator.World(e).Export().Deployments); n != 100_000 {
			b.Fatalf("%d deployments", n)
		}
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
}

// BenchmarkAdvance100kTransitions: one clock advance firing 100,000 due transitions
// (50,000 queued deployments going to building, then ready) through the world.
func BenchmarkAdvance100kTransitions(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart})
		if err != nil {
			b.Fatal(err)
		}
		w := emulator.World(e)
		snap := w.Export()
		for i := 0; i < 50_000; i++ {
			at := testStart.Add(-time.Duration(i) * time.Millisecond)
			snap.Deployments = append(snap.Deployments, state.Deployment{
				ID: fmt.Sprintf("dpl_q%07d", i), ProjectID: "prj_blog", URL: fmt.Sprintf("https://blog-%07d.hostemu.localhost", i), Target: "preview",
				Status: "queued", CreatedAt: at, Timings: state.Timings{QueuedAt: &at}, Files: map[string]string{},
			})
		}
		if err := w.Import(snap); err != nil { // resumes: schedules the rest of every lifecycle
			b.Fatal(err)
		}
		if n := w.Pending(); n < 50_000 { // one pending step a lifecycle: its next
			b.Fatalf("%d transitions scheduled", n)
		}
		runtime.GC() // the set-up's garbage is not the advance's
		b.StartTimer()
		if _, err := w.Advance(6 * time.Second); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n := w.Pending(); n > 10 {
			b.Fatalf("%d transitions left", n)
		}
		e.Close()
		b.StartTimer()
	}
}

// BenchmarkCipher: encrypt then decrypt through the HTTP handlers (in-process, whole
// middleware chain) against raw AES-256-GCM seal and open of the same bytes.
func BenchmarkCipher(b *testing.B) {
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	call := func(path string, body []byte) []byte {
		r := httptest.NewRequest("POST", path, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer t-cipher")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	for _, size := range []int{1 << 10, 64 << 10} {
		payload := strings.Repeat("x", size)
		name := fmt.Sprintf("%dKiB", size>>10)
		b.Run("http/"+name, func(b *testing.B) {
			req, _ := json.Marshal(map[string]string{"payload": payload})
			b.SetBytes(int64(size))
			for b.Loop() {
				// the envelope is URL-safe: cut it out and paste it in without a JSON codec,
				// so the figure is the server's
				env := call("/v1/encrypt", req)
				env = env[len(`{"envelope":"`) : len(env)-2]
				call("/v1/decrypt", append(append([]byte(`{"envelope":"`), env...), `"}`...))
			}
		})
		b.Run("raw-aes-gcm/"+name, func(b *testing.B) {
			block, _ := aes.NewCipher(make([]byte, 32))
			gcm, _ := cipher.NewGCM(block)
			nonce := make([]byte, gcm.NonceSize())
			buf := make([]byte, 0, size+gcm.Overhead())
			b.SetBytes(int64(size))
			for b.Loop() {
				sealed := gcm.Seal(buf[:0], nonce, []byte(payload), nil)
				if _, err := gcm.Open(sealed[:0], nonce, sealed, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEdgeChain compares a small file served through hostemu's whole edge path
// (routing by host, the journal, faults, the file store) with http.FileServer serving
// the same bytes from memory, in-process, in the same run.
func BenchmarkEdgeChain(b *testing.B) {
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: emulator.ClockManual, ClockStart: testStart})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	page := []byte("<!doctype html><h1>Hello from the edge</h1>")
	sum := sha256.Sum256(page)
	digest := hex.EncodeToString(sum[:])
	do := func(method, path, host, token string, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Host = host
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do("POST", "/v1/files", "127.0.0.1", "t-deploy", page, map[string]string{"X-File-Digest": digest, "Content-Type": "application/octet-stream"}); w.Code != 201 {
		b.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	w := do("POST", "/v1/deployments", "127.0.0.1", "t-deploy", []byte(`{"project_id":"prj_shop","files":{"index.html":"`+digest+`"}}`), map[string]string{"Content-Type": "application/json"})
	var created struct{ URL string }
	json.Unmarshal(w.Body.Bytes(), &created)
	host := strings.TrimPrefix(created.URL, "https://")
	do("POST", "/_emulator/clock/advance", "127.0.0.1", "", []byte(`{"by":"6s"}`), map[string]string{"Content-Type": "application/json"})
	if w := do("GET", "/", host, "", nil, nil); w.Code != 200 || w.Body.String() != string(page) {
		b.Fatalf("edge: %d %s", w.Code, w.Body)
	}
	fs := http.FileServer(http.FS(fstest.MapFS{"index.html": {Data: page}}))
	for _, bc := range []struct {
		name string
		h    http.Handler
		host string
	}{{"hostemu-edge", h, host}, {"fileserver", fs, "127.0.0.1"}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("GET", "/", nil)
				r.Host = bc.host
				w := httptest.NewRecorder()
				bc.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

// BenchmarkBundle100k: GET /_emulator/bundle of a world of 100,000 deployments (the
// archive streamed to a discarding client), and PUT of that bundle into another
// emulator. bundle-MB is the archive's size; heap-MB the live heap after a GC once it
// was written or restored.
func BenchmarkBundle100k(b *testing.B) {
	newBig := func() (*emulator.Emulator, http.Handler) {
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/big/generate-100k.yaml", ClockMode: clock.Manual, ClockStart: testStart,
			Limits: emulator.Limits{MaxStateBytes: 1 << 30}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e, e.Handler()
	}
	_, src := newBig()
	var tgz []byte
	// the bundle PUT sends, made here so that PUT runs alone too (-bench 'Bundle100k/PUT')
	{
		w := httptest.NewRecorder()
		src.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:4700/_emulator/bundle", nil))
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		tgz = w.Body.Bytes()
	}
	b.Run("GET", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			src.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:4700/_emulator/bundle", nil))
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			tgz = w.Body.Bytes()
		}
		b.ReportMetric(float64(len(tgz))/(1<<20), "bundle-MB")
	})
	_, dst := newBig()
	b.Run("PUT", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest("PUT", "http://127.0.0.1:4700/_emulator/bundle", bytes.NewReader(tgz))
			r.Header.Set("Content-Type", "application/gzip")
			w := httptest.NewRecorder()
			dst.ServeHTTP(w, r)
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
	})
}
