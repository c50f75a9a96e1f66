package hugeheap

import (
	"runtime"
	"testing"
)

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// Outside Allow's window, and below MinBytes inside it, Reserve allocates nothing and
// runs no collection: a test process, an import over HTTP and a namespace are left to
// the runtime.
func TestReserveActsOnlyInItsWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window bool
		n      uint64
		asked  int64
	}{
		{"no window", false, 256 << 20, 0},
		{"no window, small", false, 1 << 20, 0},
		{"window, below MinBytes", true, MinBytes - 1, 0},
		{"window, zero", true, 0, 0},
		{"window, MinBytes", true, MinBytes, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.window {
				stop := Allow()
				defer stop()
			}
			runtime.GC() // none under way, to end between the readings
			before, gcs := Asked(), numGC()
			did := Reserve(tc.n)
			if got := Asked() - before; got != tc.asked {
				t.Errorf("Asked grew by %d, want %d", got, tc.asked)
			}
			if tc.asked == 0 && (did || numGC() != gcs) {
				t.Errorf("Reserve(%d) acted (%v, %d collections) where it must not", tc.n, did, numGC()-gcs)
			}
		})
	}
}

// A stop called twice closes its window once: another window stays open.
func TestAllowStopIsIdempotent(t *testing.T) {
	outer := Allow()
	inner := Allow()
	inner()
	inner()
	before := Asked()
	Reserve(MinBytes)
	if Asked() != before+1 {
		t.Fatal("the outer window was closed by the inner stop called twice")
	}
	outer()
	before = Asked()
	Reserve(MinBytes)
	if Asked() != before {
		t.Fatal("Reserve acted after every window closed")
	}
}
