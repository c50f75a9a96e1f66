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
// puts GOGC back. It respects a GOGC the process was started with (the base it raises
// from; GOGC=off turns the tuner off) and GOMEMLIMIT, which the runtime keeps either
// way. One tuner at a time: a second Start while one runs does nothing.
func Start(headroom uint64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || headroom == 0 || !running.CompareAndSwap(false, true) {
		return func() {}
	}
	t := &tuner{headroom: headroom, base: base, percent: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
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
	want := Percent(t.sample[0].Value.Uint64(), t.headroom, t.base)
	if d := want - t.percent; d > t.percent/10 || -d > t.percent/10 { // not on every wobble
		t.percent = want
		debug.SetGCPercent(want)
	}
	return true
}

// Percent is the GOGC that lets a heap of live bytes grow by at least headroom
// before the next collection, and never less than base, at most 5000.
func Percent(live, headroom uint64, base int) int {
	if live == 0 {
		return max(base, maxPercent)
	}
	p := headroom * 100 / live
	if p > maxPercent {
		p = maxPercent
	}
	return max(base, int(p))
}
