package emulator_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// createNS creates a namespace in-process and returns its id and read token.
func createNS(b testing.TB, h http.Handler) (id, read string) {
	r := httptest.NewRequest("POST", "http://127.0.0.1/_emulator/namespaces", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 201 {
		b.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var out struct {
		Namespace string
		Tokens    struct{ Read string }
	}
	json.Unmarshal(w.Body.Bytes(), &out)
	return out.Namespace, out.Tokens.Read
}

func deleteNS(b testing.TB, h http.Handler, id string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("DELETE", "http://127.0.0.1/_emulator/namespaces/"+id, nil))
	if w.Code != 200 {
		b.Fatalf("delete: %d %s", w.Code, w.Body)
	}
}

// BenchmarkNamespaceCreate creates (and deletes) namespaces from the embedded default
// fixtures, in-process; median-ms is the median creation.
func BenchmarkNamespaceCreate(b *testing.B) {
	e, err := emulator.New(emulator.Options{ClockMode: clock.Manual, ClockStart: testStart})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	var took []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		id, _ := createNS(b, h)
		took = append(took, time.Since(start))
		b.StopTimer()
		deleteNS(b, h, id)
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkNamespacesLive holds 1,000 live namespaces of the embedded default fixtures
// and reports the process's resident memory, before and with them.
func BenchmarkNamespacesLive(b *testing.B) {
	for b.Loop() {
		e, err := emulator.New(emulator.Options{ClockMode: clock.Manual, ClockStart: testStart})
		if err != nil {
			b.Fatal(err)
		}
		h := e.Handler()
		runtime.GC()
		before := rssMB(b)
		for range 1000 {
			createNS(b, h)
		}
		runtime.GC()
		after := rssMB(b)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(after, "rss-MB")
		b.ReportMetric(after-before, "rss-delta-MB")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		e.Close()
	}
}

// rssMB is the process's resident set (VmRSS), in MiB.
func rssMB(b testing.TB) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	b.Skip("no VmRSS")
	return 0
}

// BenchmarkGetDeploymentNamespaces is the GET chain of BenchmarkGetDeployment with no
// namespace, then with 1,000 live ones, by the default world's token and by a
// namespace's: the difference is the cost of finding a request's namespace.
func BenchmarkGetDeploymentNamespaces(b *testing.B) {
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	h := e.Handler()
	run := func(name, token string) {
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/deployments/dpl_first", nil)
			r.Header.Set("Authorization", "Bearer "+token)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
	run("no-namespaces", "t-read")
	var read string
	for range 1000 {
		_, read = createNS(b, h)
	}
	run("1000-namespaces/default-token", "t-read")
	run("1000-namespaces/namespace-token", read)
}
