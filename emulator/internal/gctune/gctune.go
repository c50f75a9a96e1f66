// Package gctune gives the garbage collector room on a small heap. With GOGC=100 a
// collection starts once the heap has grown by the live heap (at least 4 MiB): hostemu's
// few MiB of live state (worlds, the journal, caches) then cost a collection every
// couple of hundred requests, about 6% of the CPU of a GET under load, where a bare
// server with nothing live collects almost for free. The tuner raises GOGC while the
// live heap is small, so that the heap may grow by at least a fixed headroom between
// collections, and leaves it as it was once the live heap is larger than that: the
// memory bound stays the live heap plus max(headroom, the live heap).
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// DefaultHeadroom is the heap growth between collections the binary allows at least.
const DefaultHeadroom = 32 << 20

// maxPercent caps GOGC: a nearly empty heap must not make a collection wait for the
// headroom many times over.
const maxPercent = 5000

// Start tunes GOGC after every collection until the returned stop is called, which
// puts GOGC back. A GOGC in the process's environment (any value, off included) is the
// user's choice and is kept as it is: Start then does nothing. GOMEMLIMIT the runtime
// keeps either way. One tuner at a time: a second Start while one runs does nothing.
func Start(headroom uint64) (stop func()) { return start(headroom, maxPercent, false) }

// Room gives the collector room for a burst of memory that is all kept, such as a
// bundle's world being read and put in place: from now until stop is called, the heap
// may grow by headroom above the live heap before a collection, however small the live
// heap is (no cap of 5000 %: the room is the point). stop puts GOGC back. As Start, it
// does nothing when the environment sets GOGC, keeps GOMEMLIMIT, and runs one tuner at
// a time.
func Room(headroom uint64) (stop func()) { return start(headroom, roomMaxPercent, true) }

// roomMaxPercent caps Room's GOGC: the heap's minimum (4 MiB) times it is 40 GiB.
const roomMaxPercent = 1_000_000

// heapMinimum is the live heap the runtime sizes the first collection by, before any
// (4 MiB at GOGC=100).
const heapMinimum = 4 << 20

// userSet reports whether the environment sets GOGC: a user who sets it (GOGC=50 to
// keep memory down, GOGC=off) gets exactly that, as from any Go program.
func userSet() bool { return os.Getenv("GOGC") != "" }

func start(headroom uint64, cap int, now bool) (stop func()) {
	if userSet() {
		return func() {}
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || headroom == 0 || !running.CompareAndSwap(false, true) {
		return func() {}
	}
	t := &tuner{headroom: headroom, base: base, percent: base, cap: cap, floor: 1,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	if now {
		// the room counts from now, not from the next collection
		t.floor = heapMinimum
		t.tune()
	}
	t.arm()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.stopped = true
			debug.SetGCPercent(base)
			t.mu.Unlock()
			running.Store(false)
		})
	}
}

// running says a tuner is on: GOGC is the process's, one owner at a time.
var running atomic.Bool

type tuner struct {
	headroom uint64
	base     int

	mu      sync.Mutex // guards the fields below
	stopped bool
	percent int // the GOGC set last
	sample  []metrics.Sample
	// cap is the highest GOGC set; floor the least live heap it is figured for (Room:
	// the heap's minimum, which the runtime sizes its first collection by)
	cap   int
	floor uint64
}

// sentinel is garbage whose finalizer runs after each collection and re-arms itself.
// It holds a pointer so that it is not put in the tiny allocator's shared blocks, whose
// objects' finalizers wait for their neighbours.
type sentinel struct{ _ *byte }

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.tune() {
			t.arm()
		}
	})
}

// tune sets GOGC for the live heap the last collection left; false once stopped.
func (t *tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return false // a runtime without the metric: leave GOGC alone
	}
	want := percent(max(t.sample[0].Value.Uint64(), t.floor), t.headroom, t.base, t.cap)
	if d := want - t.percent; d > t.percent/10 || -d > t.percent/10 { // not on every wobble
		t.percent = want
		debug.SetGCPercent(want)
	}
	return true
}

// Percent is the GOGC that lets a heap of live bytes grow by at least headroom
// before the next collection, and never less than base, at most 5000.
func Percent(live, headroom uint64, base int) int { return percent(live, headroom, base, maxPercent) }

func percent(live, headroom uint64, base, cap int) int {
	if live == 0 {
		return max(base, cap)
	}
	p := headroom * 100 / live
	if p > uint64(cap) {
		p = uint64(cap)
	}
	return max(base, int(p))
}
