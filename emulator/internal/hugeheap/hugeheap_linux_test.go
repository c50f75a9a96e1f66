package hugeheap

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestModeAndPageSizeFromSysfs(t *testing.T) {
	old := sysfs
	t.Cleanup(func() { sysfs = old })
	for _, tc := range []struct{ enabled, size, mode string }{
		{"always [madvise] never\n", "2097152\n", "madvise"},
		{"[always] madvise never\n", "2097152\n", "always"},
		{"always madvise [never]\n", "", "never"},
		{"no brackets\n", "garbage", ""},
		{"[unclosed\n", "3000000", ""},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "enabled"), []byte(tc.enabled), 0o644)
		if tc.size != "" {
			os.WriteFile(filepath.Join(dir, "hpage_pmd_size"), []byte(tc.size), 0o644)
		}
		sysfs = dir + "/"
		if got := mode(); got != tc.mode {
			t.Errorf("%q: mode %q, want %q", tc.enabled, got, tc.mode)
		}
		want := uintptr(2 << 20) // also for a missing, bad or not-a-power-of-two size
		if got := pageSize(); got != want {
			t.Errorf("size %q: %d, want %d", tc.size, got, want)
		}
	}
	sysfs = filepath.Join(t.TempDir(), "missing") + "/"
	if mode() != "" {
		t.Error("a kernel without the file: mode must be empty")
	}
	// not "madvise": Reserve does nothing, no collection
	stop := Allow()
	defer stop()
	runtime.GC() // none under way, to end between the readings
	gcs := numGC()
	if Reserve(64<<20) || numGC() != gcs {
		t.Error("Reserve acted where the kernel gives no huge pages on request")
	}
}

// Where the kernel gives huge pages on request, what the heap hands out after a
// Reserve lies in the range it advised for them (smaps' VmFlags "hg"), also where no
// collection comes by itself to free that range (a replay's gctune.Room). A free gap
// the heap had below it is used first, as it should be: in a fresh process (the binary's
// start, a test run with -count=1) there is none; in a test process run many times
// there are, and the allocation is checked only where it lands in the range.
func TestReserveAdvisesTheHeapThatComesNext(t *testing.T) {
	_, beg, end := reserved(t)
	b := make([]byte, 16<<20)
	for _, at := range []*byte{&b[0], &b[len(b)-1]} {
		p := uintptr(unsafe.Pointer(at))
		switch {
		case p >= end:
			t.Errorf("a 16 MiB allocation after Reserve lies past the range it advised [%#x, %#x), at %#x: the range was not freed for it", beg, end, p)
		case p >= beg && !hg(vmFlags(t, p)):
			t.Errorf("a 16 MiB allocation after Reserve lies in a mapping without huge-page advice at %#x: VmFlags %q", p, vmFlags(t, p))
		}
	}
	b[0] = 1
}

// reserved is the set-up of a test of the advice, where the kernel gives huge pages on
// request (else the test is skipped): collections off, as under a replay's room, until
// the test ends; a window open until the test ends or it calls stop; a Reserve of 64 MiB
// made in it, and the range that Reserve advised.
func reserved(t *testing.T) (stop func(), beg, end uintptr) {
	t.Helper()
	if mode() != "madvise" {
		t.Skipf("transparent huge pages are %q here, not madvise", mode())
	}
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(gc) })
	stop = Allow()
	t.Cleanup(stop)
	if !Reserve(64 << 20) {
		t.Fatal("Reserve(64 MiB) did not advise")
	}
	beg, end = advisedRange()
	return stop, beg, end
}

// advisedRange is the range the open windows' last Reserve advised.
func advisedRange() (beg, end uintptr) {
	mu.Lock()
	defer mu.Unlock()
	if len(advised) == 0 {
		return 0, 0
	}
	r := advised[len(advised)-1]
	return r.beg, r.end
}

func hg(flags string) bool { return strings.Contains(" "+flags+" ", " hg ") }

// vmFlags is the VmFlags line of the mapping holding address p.
func vmFlags(t *testing.T, p uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if r, _, ok := strings.Cut(line, " "); ok && isHexRange(r) { // a mapping's first line
			lo, hi, _ := strings.Cut(r, "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			z, _ := strconv.ParseUint(hi, 16, 64)
			in = uint64(p) >= a && uint64(p) < z
			continue
		}
		if in {
			if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return ""
}

func isHexRange(r string) bool {
	lo, hi, ok := strings.Cut(r, "-")
	_, e1 := strconv.ParseUint(lo, 16, 64)
	_, e2 := strconv.ParseUint(hi, 16, 64)
	return ok && e1 == nil && e2 == nil
}

// Reserve stands aside where its advice could reach memory that is not the heap's (a
// huge page larger than the heap's arenas, which rounding out to it would pass) and
// where the range it reserves is memory the kernel commits (vm.overcommit_memory 2:
// there a heap that cannot grow by it is the runtime's fatal "out of memory", where the
// world itself, smaller than the estimate, would have fitted).
func TestReserveStandsAsideWhereItIsNotSafe(t *testing.T) {
	kernel := mode()
	oldSysfs, oldProc := sysfs, procVM
	t.Cleanup(func() { sysfs, procVM = oldSysfs, oldProc })
	for _, tc := range []struct {
		name       string
		size       string
		overcommit string
		n          uint64
		want       bool
	}{
		{"huge pages of 2 MiB, heuristic overcommit", "2097152", "0", 64 << 20, true},
		{"huge pages of 2 MiB, no overcommit file", "2097152", "", 64 << 20, true},
		{"huge pages of 2 MiB, overcommit always", "2097152", "1", 64 << 20, true},
		{"huge pages of 128 MiB: larger than an arena", "134217728", "0", MaxBytes, false},
		{"strict overcommit", "2097152", "2\n", 64 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want && kernel == "" {
				t.Skip("this kernel has no transparent huge pages to advise")
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "enabled"), []byte("always [madvise] never\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "hpage_pmd_size"), []byte(tc.size+"\n"), 0o644)
			if tc.overcommit != "" {
				os.WriteFile(filepath.Join(dir, "overcommit_memory"), []byte(tc.overcommit), 0o644)
			}
			sysfs, procVM = dir+"/", dir+"/"
			stop := Allow()
			defer stop()
			runtime.GC() // none under way, to end between the readings
			gcs := numGC()
			if got := Reserve(tc.n); got != tc.want {
				t.Errorf("Reserve(%d MiB): %v, want %v", tc.n>>20, got, tc.want)
			}
			if !tc.want && numGC() != gcs {
				t.Error("Reserve ran a collection where it stands aside")
			}
		})
	}
}

// The advice ends with the window: the world built in it keeps its huge pages, but
// what the heap puts in the rest of the reserved range after the start (an import, a
// namespace) is in memory without it, as the rest of the heap is. (Not "no mapping of
// the process is advised": the runtime advises its own metadata once the heap's goal
// passes 1 GiB, as with collections off.)
func TestTheAdviceEndsWithTheWindow(t *testing.T) {
	stop, beg, end := reserved(t)
	world := make([]byte, 8<<20)
	world[0] = 1
	if p := uintptr(unsafe.Pointer(&world[0])); p >= beg && p < end && !hg(vmFlags(t, p)) {
		t.Fatalf("the world built in the window is not in advised memory: VmFlags %q", vmFlags(t, p))
	}
	stop()
	for _, p := range []uintptr{beg, (beg + end) / 2, end - 1} {
		if flags := vmFlags(t, p); hg(flags) {
			t.Errorf("the window closed and the range it advised is advised still at %#x: VmFlags %q", p, flags)
		}
	}
	later := make([]byte, 16<<20)
	if p := uintptr(unsafe.Pointer(&later[0])); p >= beg && p < end && hg(vmFlags(t, p)) {
		t.Errorf("an allocation after the window closed lies in memory advised for huge pages at %#x: VmFlags %q", p, vmFlags(t, p))
	}
	later[0] = 1
	world[1] = 1
}

// A start that asks twice (--fixtures generating many deployments, then --state) has
// both ranges taken back when it ends, the first one too.
func TestEveryRangeOfAStartIsTakenBack(t *testing.T) {
	stop, beg1, end1 := reserved(t)
	world := make([]byte, 56<<20) // the fixtures' world, kept
	world[0] = 1
	if !Reserve(64 << 20) {
		t.Fatal("the second Reserve did not advise")
	}
	beg2, end2 := advisedRange()
	stop()
	for _, p := range []uintptr{beg1, end1 - 1, beg2, end2 - 1} {
		if flags := vmFlags(t, p); hg(flags) {
			t.Errorf("the start is over and %#x, in a range it advised ([%#x, %#x), [%#x, %#x)), is advised still: VmFlags %q", p, beg1, end1, beg2, end2, flags)
		}
	}
	world[1] = 1
}
