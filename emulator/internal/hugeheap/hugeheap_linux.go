package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// sysfs is where the kernel says how it gives huge pages (a variable for the tests).
var sysfs = "/sys/kernel/mm/transparent_hugepage/"

// procVM is where the kernel says how it commits memory (a variable for the tests).
var procVM = "/proc/sys/vm/"

// arenaBytes is the size and alignment of the Go heap's arenas on Linux: 64 MiB on
// 64-bit platforms, 4 MiB on 32-bit ones (heapArenaBytes in runtime/malloc.go; the
// heap reserves them whole, so the huge pages a heap span touches are the heap's when
// a huge page is no larger than an arena).
const arenaBytes = 4 << 20 << (4 * (^uintptr(0) >> 63))

// strictCommit reports whether the kernel commits the memory a process maps and
// refuses it beyond a limit (vm.overcommit_memory 2). There the reserved range counts
// in full, and a heap that cannot grow by it is the runtime's fatal "out of memory".
func strictCommit() bool {
	b, err := os.ReadFile(procVM + "overcommit_memory")
	return err == nil && string(bytes.TrimSpace(b)) == "2"
}

// mode is the kernel's setting for anonymous memory: "always", "madvise" or "never"
// (the bracketed word of the file), "" when the file cannot be read.
func mode() string {
	b, err := os.ReadFile(sysfs + "enabled")
	if err != nil {
		return ""
	}
	_, rest, ok := bytes.Cut(b, []byte("["))
	word, _, ok2 := bytes.Cut(rest, []byte("]"))
	if !ok || !ok2 {
		return ""
	}
	return string(word)
}

// pageSize is the size of a huge page (2 MiB on amd64 and on arm64 with 4 KiB pages).
func pageSize() uintptr {
	b, err := os.ReadFile(sysfs + "hpage_pmd_size")
	if err != nil {
		return 2 << 20
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n == 0 || n&(n-1) != 0 {
		return 2 << 20
	}
	return uintptr(n)
}

func reserve(n uint64) bool {
	if mode() != "madvise" {
		return false
	}
	huge := pageSize()
	if uint64(huge)*4 > n {
		return false // a few huge pages at most: not worth a collection
	}
	if huge > arenaBytes || strictCommit() {
		return false // advice past the heap's arenas; a range the kernel may refuse
	}
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return false // 32 bits: up to 1 GiB of address space more is a start that may fail
	}
	// A span of the heap that nothing writes to: at the start the heap grows for it,
	// and the runtime knows fresh memory to be zero, so nothing is mapped yet when the
	// advice is given (a start's second Reserve lies partly over the first one's range,
	// which the runtime zeroes: see the package comment). The advice covers the huge
	// pages the span touches, its first and last included: the heap's arenas are
	// arenaBytes ranges aligned as such, no smaller than a huge page, so the rest of them
	// is the heap's too.
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := p &^ (huge - 1)
	end := (p + uintptr(n) + huge - 1) &^ (huge - 1)
	// ENOMEM: part of the range is not mapped (the arena's end); the rest is advised
	err := madvise(beg, end-beg, syscall.MADV_HUGEPAGE)
	did := err == nil || err == syscall.ENOMEM
	if did {
		advised = append(advised, span{beg, end})
	}
	runtime.KeepAlive(b) // b is dead from here: the collection frees the span, so that
	runtime.GC()         // the world's allocations come from it
	return did
}

// span is a range of addresses, [beg, end).
type span struct{ beg, end uintptr }

// advised is what the open windows' Reserves advised (each range on its own: what lies
// between two need not be the heap's).
var advised []span

// unadvise takes the advice over the advised ranges back (MADV_NOHUGEPAGE: Linux has
// no way back to no advice, and where huge pages are "madvise" this is the same to new
// faults and keeps khugepaged away; the huge pages there stay as they are).
func unadvise() {
	for _, r := range advised {
		madvise(r.beg, r.end-r.beg, syscall.MADV_NOHUGEPAGE)
	}
	advised = nil
}

// madvise gives the advice over [p, p+n).
func madvise(p, n uintptr, advice int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, p, n, uintptr(advice)); e != 0 {
		return e
	}
	return nil
}
