package testkit_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

// Hits and NearMisses fetch their fault alone: asked in a loop over many faults, each
// call is one GET /_emulator/faults/{id}, never the listing, which weighs the near
// misses of every fault with no hits (docs/control-api.md "Near misses").
func TestFaultHitsFetchOneFault(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	e := behindProxy(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		next.ServeHTTP(w, r)
	})

	var faults []*testkit.Fault
	for range 5 {
		faults = append(faults, e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "DELETE", Path: "/v1/projects"}, Status: 503}))
	}
	fired := e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "GET", Path: "/v1/projects"}, Status: 503, Times: 1})
	if status, _ := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil); status != 503 {
		t.Fatalf("GET /v1/projects: %d, want the fault's 503", status)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()
	for _, f := range faults {
		if n := f.Hits(); n != 0 {
			t.Errorf("%s: Hits = %d, want 0", f.ID(), n)
		}
		if nms := f.NearMisses(); len(nms) != 1 || nms[0].Method != "GET" {
			t.Errorf("%s: NearMisses = %+v, want the GET /v1/projects", f.ID(), nms)
		}
	}
	if n := fired.Hits(); n != 1 {
		t.Errorf("fired: Hits = %d, want 1", n)
	}
	if nms := fired.NearMisses(); len(nms) != 0 {
		t.Errorf("fired: NearMisses = %+v, want none", nms)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := 2*len(faults) + 2; len(seen) != want {
		t.Errorf("%d requests, want %d: %v", len(seen), want, seen)
	}
	for _, s := range seen {
		if !strings.HasPrefix(s, "GET /_emulator/faults/flt_") {
			t.Errorf("Hits/NearMisses sent %s, want GET /_emulator/faults/{id} only", s)
		}
	}
}

// Against a hostemu from before GET /_emulator/faults/{id} (which answers it 405, as a
// route with DELETE alone), Hits and NearMisses read the listing instead: a testkit
// newer than the service container it connects to still works.
func TestFaultHitsOnAnOlderHostemu(t *testing.T) {
	t.Parallel()
	e := behindProxy(t, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/_emulator/faults/") {
			w.Header().Set("Allow", "DELETE")
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, `{"error":{"code":"method_not_allowed","message":"GET is not allowed here"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
	missed := e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "DELETE", Path: "/v1/projects"}, Status: 503})
	fired := e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "GET", Path: "/v1/projects"}, Status: 503})
	if status, _ := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil); status != 503 {
		t.Fatalf("GET /v1/projects: %d, want the fault's 503", status)
	}
	if n := fired.Hits(); n != 1 {
		t.Errorf("fired: Hits = %d, want 1", n)
	}
	if n := missed.Hits(); n != 0 {
		t.Errorf("missed: Hits = %d, want 0", n)
	}
	if nms := missed.NearMisses(); len(nms) != 1 || nms[0].Method != "GET" {
		t.Errorf("missed: NearMisses = %+v, want the GET /v1/projects", nms)
	}
	msg := fatalOf(t, func(tb testing.TB) {
		f := e.With(tb).InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "PUT", Path: "/v1/projects"}, Status: 503})
		f.Remove()
		f.Hits()
	})
	if !strings.Contains(msg, "is gone") {
		t.Errorf("Hits of a removed fault on an older hostemu: %q, want it to fail saying the fault is gone", msg)
	}
}

// behindProxy starts an emulator and connects to it through a proxy that hands every
// request to h, with next the emulator itself.
func behindProxy(t *testing.T, h func(w http.ResponseWriter, r *http.Request, next http.Handler)) *testkit.Emulator {
	t.Helper()
	srv := testkit.Start(t)
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, rp) }))
	t.Cleanup(px.Close)
	return testkit.Connect(t, px.URL, testkit.Shared())
}
