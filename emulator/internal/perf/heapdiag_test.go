package perf_test

import (
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

// TestCreateHeap prints what a create leaves on the heap once its lifecycle has run
// (bytes and objects a deployment, after a collection), and what it allocates on the
// way (the request and its two transitions) and the process's CPU time a create, for
// hostemu (manual clock, advanced 7 s every 1,000 creates: the default lifecycle runs
// out) and then the reference (whose figures the heap hostemu left behind sways: read
// hostemu's against hostemu's of another tree). The CPU figure moves by a third from
// run to run on a shared machine; the allocations do not. HOSTEMU_PERF_HEAPPROFILE
// names a file for a heap profile of hostemu's world once its creates are done (run
// with -test.memprofilerate 256 or so, and read with pprof -sample_index=inuse_space):
//
//	HOSTEMU_PERF=1 GOMAXPROCS=1 go test -count=1 -run TestCreateHeap -v ./emulator/internal/perf/
func TestCreateHeap(t *testing.T) {
	needPerf(t, "weigh what a create leaves on the heap")
	const n = 20000
	page := []byte("<!doctype html><h1>Hello from the edge</h1>")
	digest := sum(page)
	create := []byte(`{"project_id":"` + bare.Project + `","files":{"index.html":"` + digest + `"},"target":"preview","env":{"FEATURE":"on"}}`)
	e, err := emulator.New(emulator.Options{ClockMode: clock.Manual, RateLimitsOff: true, MaxWorldBytes: 1 << 31})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	emu := e.Handler()
	ref := bare.New([]byte(`{}`))
	for _, h := range []http.Handler{emu, ref} {
		call(t, h, "POST", "/v1/files", bare.DeployToken, "application/octet-stream", page, map[string]string{"X-File-Digest": digest}, 201)
	}
	advance := func() {
		call(t, emu, "POST", "/_emulator/clock/advance", "", "application/json", []byte(`{"by":"7s"}`), nil, 200)
	}
	for _, side := range []struct {
		name string
		h    http.Handler
		tick func()
	}{{"hostemu", emu, advance}, {"bare", ref, func() {}}} {
		// warm: the journal and the event ring full
		for range 2000 {
			call(t, side.h, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
		}
		side.tick()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cpu0 := processCPU()
		for i := range n {
			call(t, side.h, "POST", "/v1/deployments", bare.DeployToken, "application/json", create, nil, 201)
			if i%1000 == 999 {
				side.tick()
			}
		}
		side.tick()
		runtime.ReadMemStats(&after)
		cpu := processCPU() - cpu0
		allocs := float64(after.Mallocs-before.Mallocs) / n
		bytes := float64(after.TotalAlloc-before.TotalAlloc) / n
		runtime.GC()
		runtime.ReadMemStats(&after)
		if f := os.Getenv("HOSTEMU_PERF_HEAPPROFILE"); f != "" && side.name == "hostemu" {
			out, err := os.Create(f)
			if err != nil {
				t.Fatal(err)
			}
			pprof.Lookup("heap").WriteTo(out, 0)
			out.Close()
		}
		t.Logf("%-8s a create and its lifecycle: %.1f allocations, %.0f bytes; left on the heap: %.0f bytes, %.1f objects a deployment; CPU %v a create (GCs %d)",
			side.name, allocs, bytes, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n,
			float64(int64(after.HeapObjects)-int64(before.HeapObjects))/n, cpu/n, after.NumGC-before.NumGC)
	}
}
