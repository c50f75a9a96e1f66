package perf_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

// TestHotPaths measures each hot path of hostemu in process (ServeHTTP, no network)
// against its reference in package bare doing the same work, side by side: rounds
// alternate between the two (A B, then B A, ...) so that the shared machine's load hits
// both alike. It prints, for each path, the median time of a request on each side,
// their allocations, and hostemu's rate as a fraction of the reference's; it asserts
// nothing about speed.
//
//	HOSTEMU_PERF=1 go test -run TestHotPaths -v ./emulator/internal/perf/
//
// HOSTEMU_PERF_ROUNDS sets the rounds (7), HOSTEMU_PERF_ONLY a regexp of the paths to
// measure. A ratio is the reference's time over hostemu's: by wall time, and by the
// process's CPU time (the steadier one on a loaded machine).
func TestHotPaths(t *testing.T) {
	needPerf(t, "measure the hot paths against their bare handlers")
	rounds := envInt("HOSTEMU_PERF_ROUNDS", 7)
	only := regexp.MustCompile(os.Getenv("HOSTEMU_PERF_ONLY"))
	t.Logf("load before: %s", loadAvg())
	for _, c := range hotCases(t) {
		if !only.MatchString(c.name) {
			continue
		}
		var emuNs, bareNs, emuCPU, bareCPU, ratios, cpuRatios []float64
		var emuAllocs, bareAllocs float64
		for r := range rounds {
			sides := []*[]float64{&emuNs, &bareNs}
			cpus := []*[]float64{&emuCPU, &bareCPU}
			ops := []func(){c.emu, c.bare}
			allocs := []*float64{&emuAllocs, &bareAllocs}
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				ns, cpu, a := measure(ops[i], c.round)
				*sides[i] = append(*sides[i], ns)
				*cpus[i] = append(*cpus[i], cpu)
				*allocs[i] = a
			}
			ratios = append(ratios, bareNs[r]/emuNs[r])
			cpuRatios = append(cpuRatios, bareCPU[r]/emuCPU[r])
		}
		t.Logf("%-30s hostemu %9s (CPU %9s) %4.0f allocs | bare %9s (CPU %9s) %4.0f allocs | %.2f of bare (min %.2f, max %.2f), by CPU %.2f (%.2f–%.2f) | load %s",
			c.name, dur(median(emuNs)), dur(median(emuCPU)), emuAllocs, dur(median(bareNs)), dur(median(bareCPU)), bareAllocs,
			median(ratios), slices.Min(ratios), slices.Max(ratios), median(cpuRatios), slices.Min(cpuRatios), slices.Max(cpuRatios), loadAvg())
	}
	if only.MatchString("namespace-create") {
		namespaceCreate(t)
	}
}

// BenchmarkHot runs each hot path of TestHotPaths on each side as a benchmark, for
// profiles of one side:
//
//	go test -run '^$' -bench 'Hot/POST_/v1/deployments$/hostemu' -cpuprofile cpu.out ./emulator/internal/perf/
func BenchmarkHot(b *testing.B) {
	for _, c := range hotCases(b) {
		for _, side := range []struct {
			name string
			op   func()
		}{{"hostemu", c.emu}, {"bare", c.bare}} {
			b.Run(c.name+"/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					side.op()
				}
			})
		}
	}
}

type hotCase struct {
	name      string
	emu, bare func() // one request (or, for the cipher, an encrypt and its decrypt)
	round     time.Duration
}

func hotCases(t testing.TB) []hotCase {
	t.Helper()
	newEmu := func(o emulator.Options) http.Handler {
		o.RateLimitsOff = true
		o.MaxWorldBytes = 1 << 31
		e, err := emulator.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e.Handler()
	}
	emu := newEmu(emulator.Options{})
	stateDir := t.TempDir()
	emuState := newEmu(emulator.Options{StateFile: filepath.Join(stateDir, "state.json")})
	logFile, err := os.Create(filepath.Join(stateDir, "bare.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })

	id := firstDeploymentIn(t, emu)
	getPath := "/v1/deployments/" + id
	body := call(t, emu, "GET", getPath, bare.ReadToken, "", nil, nil, 200)
	ref := bare.New(body)
	refState := bare.NewWithLog(body, logFile)
	if got := call(t, ref, "GET", getPath, bare.ReadToken, "", nil, nil, 200); !bytes.Equal(got, body) {
		t.Fatal("the bare GET answers other bytes")
	}

	var cases []hotCase
	cases = append(cases, hotCase{name: "GET /v1/deployments/{id}", round: 200 * time.Millisecond,
		emu:  func() { call(t, emu, "GET", getPath, bare.ReadToken, "", nil, nil, 200) },
		bare: func() { call(t, ref, "GET", getPath, bare.ReadToken, "", nil, nil, 200) }})

	// creates: the file they name is uploaded first, as a suite does
	page := []byte("<!doctype html><h1>Hello from the edge</h1>")
	digest := sum(page)
	for _, h := range []http.Handler{emu, emuState, ref, refState} {
		call(t, h, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", page, map[string]string{"X-File-Digest": digest}, 201)
	}
	create := []byte(`{"project_id":"` + bare.Project + `","files":{"index.html":"` + digest + `"},"target":"preview","env":{"FEATURE":"on"}}`)
	cmpShape(t, call(t, emu, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201),
		call(t, ref, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201))
	cases = append(cases, hotCase{name: "POST /v1/deployments", round: 200 * time.Millisecond,
		emu: func() {
			call(t, emu, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
		},
		bare: func() {
			call(t, ref, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
		}})
	cases = append(cases, hotCase{name: "POST /v1/deployments --state", round: 300 * time.Millisecond,
		emu: func() {
			call(t, emuState, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
		},
		bare: func() {
			call(t, refState, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
		}})

	for _, size := range []int{1 << 10, 1 << 20} {
		file := make([]byte, size)
		rand.Read(file)
		hdr := map[string]string{"X-File-Digest": sum(file)}
		cmpShape(t, call(t, emu, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", file, hdr, 201),
			call(t, ref, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", file, hdr, 201))
		cases = append(cases, hotCase{name: "POST /v1/files " + size1(size), round: 200 * time.Millisecond,
			emu: func() {
				call(t, emu, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", file, hdr, 201)
			},
			bare: func() {
				call(t, ref, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", file, hdr, 201)
			}})
	}

	for _, size := range []int{1 << 10, 64 << 10} {
		req, _ := json.Marshal(map[string]string{"payload": strings.Repeat("x", size)})
		roundTrip := func(h http.Handler) func() {
			return func() {
				env := call(t, h, "POST", "/v1/encrypt", bare.CipherToken, "application/json", req, nil, 200)
				// the envelope is URL-safe base64 on both sides: cut it out and paste it in
				env = env[len(`{"envelope":"`) : len(env)-2]
				out := call(t, h, "POST", "/v1/decrypt", bare.CipherToken, "application/json", append(append([]byte(`{"envelope":"`), env...), `"}`...), nil, 200)
				if len(out) != size+len(`{"payload":""}`) {
					t.Fatalf("decrypt answered %d bytes", len(out))
				}
			}
		}
		cases = append(cases, hotCase{name: "encrypt+decrypt " + size1(size), round: 200 * time.Millisecond, emu: roundTrip(emu), bare: roundTrip(ref)})
	}

	edgeH, host := edgeWorld(t, page)
	fs := http.FileServer(http.FS(fstest.MapFS{"index.html": {Data: page}}))
	edgeGet := func(h http.Handler, host string) func() {
		return func() {
			if out := callHost(t, h, host, "GET", "/", "", "", nil, nil, 200); !bytes.Equal(out, page) {
				t.Fatalf("edge answered %q", out)
			}
		}
	}
	cases = append(cases, hotCase{name: "edge small file", round: 200 * time.Millisecond, emu: edgeGet(edgeH, host), bare: edgeGet(fs, "127.0.0.1")})
	return cases
}

// edgeWorld is an emulator on a manual clock serving page as a ready deployment's
// index.html, and that deployment's host.
func edgeWorld(t testing.TB, page []byte) (http.Handler, string) {
	e, err := emulator.New(emulator.Options{ClockMode: emulator.ClockManual})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	h := e.Handler()
	call(t, h, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", page, map[string]string{"X-File-Digest": sum(page)}, 201)
	out := call(t, h, "POST", "/v1/deployments", bare.DeployToken, "application/json", []byte(`{"project_id":"prj_demo","files":{"index.html":"`+sum(page)+`"}}`), nil, 201)
	var created struct{ URL string }
	json.Unmarshal(out, &created)
	callHost(t, h, "127.0.0.1", "POST", "/_emulator/clock/advance", "", "application/json", []byte(`{"by":"60s"}`), nil, 200)
	u, err := url.Parse(created.URL)
	if err != nil || u.Host == "" {
		t.Fatalf("deployment url %q", created.URL)
	}
	return h, u.Host
}

// namespaceCreate prints the median of 300 namespace creations from the default
// fixtures, in process (each deleted after, untimed).
func namespaceCreate(t *testing.T) {
	e, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	var took []float64
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocs, bytes0 := ms.Mallocs, ms.TotalAlloc
	const n = 300
	ids := make([]string, 0, n)
	runtime.GC()
	for range n {
		start := time.Now()
		out := callHost(t, h, "127.0.0.1", "POST", "/_emulator/namespaces", "", "", nil, nil, 201)
		took = append(took, float64(time.Since(start)))
		var ns struct{ Namespace string }
		json.Unmarshal(out, &ns)
		ids = append(ids, ns.Namespace)
		if len(ids) == 50 { // keep the number live bounded, as a suite does
			for _, id := range ids {
				callHost(t, h, "127.0.0.1", "DELETE", "/_emulator/namespaces/"+id, "", "", nil, nil, 200)
			}
			ids = ids[:0]
		}
	}
	runtime.ReadMemStats(&ms)
	slices.Sort(took)
	t.Logf("%-32s median %s (p90 %s), %.0f allocs and %.0f KB per create and delete | load %s", "POST /_emulator/namespaces",
		dur(took[len(took)/2]), dur(took[len(took)*9/10]), float64(ms.Mallocs-allocs)/n, float64(ms.TotalAlloc-bytes0)/n/1024, loadAvg())
}

// measure runs op for about d and returns its time, the process's CPU time (every
// goroutine's: the collector's and the emulator's own work included) and its
// allocations per call. The CPU time is the steadier figure when other processes load
// the machine.
func measure(op func(), d time.Duration) (ns, cpuNs, allocs float64) {
	op() // warm
	// a collection of what the rounds before left (the creates' worlds grow to hundreds
	// of megabytes) must not land on this round
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	n := 0
	cpu0 := processCPU()
	start := time.Now()
	for time.Since(start) < d || n < 5 {
		for range 8 {
			op()
		}
		n += 8
	}
	el := time.Since(start)
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&ms)
	return float64(el) / float64(n), float64(cpu) / float64(n), float64(ms.Mallocs-before) / float64(n)
}

// processCPU is the user and system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writer is a ResponseWriter kept for the answer's status and body.
type writer struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (w *writer) Header() http.Header { return w.h }
func (w *writer) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}
func (w *writer) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	return w.body.Write(b)
}
func (w *writer) Flush() {}

func call(t testing.TB, h http.Handler, method, path, token, ctype string, body []byte, hdr map[string]string, want int) []byte {
	return callHost(t, h, "127.0.0.1", method, path, token, ctype, body, hdr, want)
}

func callHost(t testing.TB, h http.Handler, host, method, path, token, ctype string, body []byte, hdr map[string]string, want int) []byte {
	var rd io.Reader // none for a request without a body: http.NoBody, as a server gives it
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rd)
	r.Host = host
	r.RemoteAddr = "127.0.0.1:40000"
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := &writer{h: http.Header{}}
	h.ServeHTTP(w, r)
	if w.code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, w.code, want, w.body.Bytes())
	}
	return w.body.Bytes()
}

// cmpShape fails unless the two JSON answers have the same keys.
func cmpShape(t testing.TB, a, b []byte) {
	t.Helper()
	var x, y map[string]any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	kx, ky := keys(x), keys(y)
	if !slices.Equal(kx, ky) {
		t.Fatalf("hostemu answers %v, bare %v", kx, ky)
	}
}

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}

func firstDeploymentIn(t testing.TB, h http.Handler) string {
	m := firstID.FindSubmatch(call(t, h, "GET", "/v1/deployments?limit=1", bare.ReadToken, "", nil, nil, 200))
	if m == nil {
		t.Fatal("no deployment in the default fixtures")
	}
	return string(m[1])
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func size1(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func dur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	default:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func envInt(name string, def int) int {
	if n, _ := strconv.Atoi(os.Getenv(name)); n > 0 {
		return n
	}
	return def
}

// loadAvg is the machine's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
