package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		live, headroom uint64
		base, want     int
	}{
		{2 << 20, 32 << 20, 100, 1600}, // a small live heap: room to grow 32 MiB
		{64 << 20, 32 << 20, 100, 100}, // a large one: GOGC as it was
		{1 << 10, 32 << 20, 100, 5000}, // nearly empty: capped
		{0, 32 << 20, 100, 5000},       // before any collection
		{16 << 20, 32 << 20, 400, 400}, // a GOGC the user set is the floor
		{16 << 20, 32 << 20, 100, 200}, // exactly the headroom
		{100 << 20, 32 << 20, 50, 50},  // a low GOGC stays low on a large heap
	} {
		if got := Percent(tt.live, tt.headroom, tt.base); got != tt.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", tt.live, tt.headroom, tt.base, got, tt.want)
		}
	}
}

// After a collection the tuner has raised GOGC for this test's small heap, and stop
// puts it back.
func TestStartTunesAfterACollectionAndStopRestores(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	stop := Start(DefaultHeadroom)
	if again := Start(DefaultHeadroom); again == nil {
		t.Fatal("a second Start returned no stop")
	}
	for range 3 { // the finalizer runs after the collection that found its sentinel
		runtime.GC()
	}
	waitFor(t, func() bool { return gogc() > 100 })
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", p)
	}
}

// gogc reads GOGC without setting it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitFor runs collections until cond holds: finalizers run on their own goroutine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 100 {
		if cond() {
			return
		}
		runtime.GC()
		runtime.Gosched()
	}
	t.Fatal("the tuner did not raise GOGC after 100 collections")
}
