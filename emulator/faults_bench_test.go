package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// BenchmarkGetDeploymentFaults is GET /v1/deployments/{id} through the whole handler,
// in-process, in a world with no fault and in one with the 100 faults of the fault
// package's BenchmarkMatch100Miss (internal/fault/testdata/miss-faults.json: ten kinds
// that between them use every match field, none matching this GET): what 100 faults
// that do not match cost a request, all of it (docs/performance.md). Rate limits are
// off, as in BenchmarkGetDeployment, so that a long run is never answered 429.
func BenchmarkGetDeploymentFaults(b *testing.B) {
	data, err := os.ReadFile("internal/fault/testdata/miss-faults.json")
	if err != nil {
		b.Fatal(err)
	}
	var kinds []json.RawMessage
	if err := json.Unmarshal(data, &kinds); err != nil {
		b.Fatal(err)
	}
	world := func(faults int) http.Handler {
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		h := e.Handler()
		for i := range faults {
			spec := strings.ReplaceAll(string(kinds[i%len(kinds)]), "{n}", fmt.Sprint(i/len(kinds)))
			r := httptest.NewRequest("POST", "http://localhost/_emulator/faults", strings.NewReader(spec))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 201 {
				b.Fatalf("fault %s: %d %s", spec, w.Code, w.Body)
			}
		}
		return h
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"no-faults", world(0)}, {"100-faults-miss", world(100)}} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/deployments/dpl_first?x=1", nil)
			r.Header.Set("Authorization", "Bearer t-read")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				bc.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
