// Package hugeheap asks the kernel for transparent huge pages under the heap that a big
// world is about to fill while the binary starts: a replayed bundle, a --state file, or
// fixtures that generate many deployments.
//
// Each 4 KiB page a process touches for the first time costs a page fault: 0.1 µs of
// the kernel's time on a desk machine, but 10–25 µs in a virtual machine whose host maps
// guest memory lazily, where a world of 100,000 deployments (about 200 MB touched, 50,000
// faults) then spends more time faulting than being read. Linux's transparent huge pages
// map 2 MiB with one fault, but where they are set to "madvise" (a common distribution
// default) only ranges a program asks for get them, and the Go runtime asks for none of
// its heap. Reserve grows the heap by the world's estimated size with one allocation
// that nothing writes to, asks for huge pages over it (madvise MADV_HUGEPAGE), and frees
// it with a collection; the runtime hands out its lowest free pages first, so the world
// is then read into that range.
//
// Reserve acts only between Allow and the stop Allow returns, which the binary opens
// around its start and nobody else does: a test process, an import over HTTP and a new
// namespace are left to the runtime as before, and the window's close takes the advice
// back (the world built keeps its huge pages: see Allow). A start may ask twice
// (--fixtures generating many deployments, then --state): the second allocation lies
// over the first one's range, free again but to the runtime dirty, and is zeroed, which
// makes it resident before the second world fills it (at the start, huge pages: a
// memset; measured, no higher peak RSS, and the second world on huge pages too).
//
// It does nothing elsewhere than on Linux, when huge pages are "always" (the heap has
// them already) or "never", where a huge page is larger than the heap's arenas (arm64
// with 64 KiB pages: 512 MiB), where the kernel commits memory strictly
// (vm.overcommit_memory 2: the reserved range would count in full, and a heap that
// cannot grow by it is fatal), and for less than MinBytes, where the collection it
// runs would cost more than the faults it saves.
package hugeheap

import (
	"sync"
	"sync/atomic"
)

// MinBytes is the least Reserve acts on.
const MinBytes = 32 << 20

// MaxBytes caps what one Reserve asks for: it is address space, not memory (pages
// nothing touches are never mapped), but a wrong estimate must not make it absurd.
const MaxBytes = 1 << 30

// open counts the windows Allow opened and did not close.
var open atomic.Int32

// mu makes one Reserve at a time and guards the window count's changes and what the
// windows advised.
var mu sync.Mutex

// asked counts the Reserves that were in a window and big enough.
var asked atomic.Int64

// Asked is how many times Reserve was called in Allow's window for at least MinBytes,
// whatever the kernel then allowed: what a test of the window reads.
func Asked() int64 { return asked.Load() }

// Allow lets Reserve act until stop is called (stop may be called more than once).
// The last stop of the windows open takes back the advice their Reserves gave: the
// world built in them keeps the huge pages it has, and what the heap later puts in the
// rest of the ranges (an import, a namespace) is the runtime's as elsewhere, where
// memory advised for huge pages would wait on the kernel's compaction at a fault and
// be collapsed into huge pages again after the runtime returns some of it (Go's own
// reasons for advising none: golang/go#61718, #64332).
func Allow() (stop func()) {
	mu.Lock()
	open.Add(1)
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if open.Add(-1) == 0 {
				unadvise()
			}
		})
	}
}

// Reserve prepares huge pages under the next n bytes the heap grows by, when Allow's
// window is open, huge pages are "madvise", and n is at least MinBytes (it is capped
// at MaxBytes). It reports whether it did; it never fails: a kernel that refuses the
// advice leaves the heap as the runtime makes it.
func Reserve(n uint64) bool {
	if open.Load() == 0 || n < MinBytes {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	if open.Load() == 0 {
		return false
	}
	asked.Add(1)
	return reserve(min(n, MaxBytes))
}
