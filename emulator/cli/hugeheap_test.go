package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/hugeheap"
	"github.com/hostemu/hostemu/emulator/internal/statetest"
)

// The binary asks for huge pages under the big worlds it builds while it starts (a
// --state file, --fixtures that generate many deployments, a replayed bundle) and under
// nothing after: a reset, an import or a namespace later is the runtime's as before.
// (Asked counts the requests made in the window; whether the kernel gave huge pages is
// hugeheap's test.) Not parallel: the window is the process's.
func TestHugePagesAreAskedForWhileStartingOnly(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join(dir, "many.yaml")
	// 20,000 generated deployments: an estimate over hugeheap.MinBytes
	if err := os.WriteFile(fixtures, []byte("generate:\n  projects: 20\n  deployments_per_project: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked, advised := hugeheap.Asked(), hugeAdvised()
	s := startServe(t, nil, "--addr", "127.0.0.1:0", "--fixtures", fixtures, "--clock", "manual")
	if got := hugeheap.Asked() - asked; got != 1 {
		t.Errorf("--fixtures generating 20,000 deployments: asked %d times, want 1", got)
	}
	noAdviceLeft(t, "--fixtures generating 20,000 deployments", advised)
	asked = hugeheap.Asked()
	if code, body := httpCall(t, s.url, "POST", "/_emulator/reset", "", ""); code != 200 {
		t.Fatalf("reset: %d %s", code, body)
	}
	if got := hugeheap.Asked() - asked; got != 0 {
		t.Errorf("a reset after the start rebuilt the fixtures' world and asked %d times, want 0", got)
	}
	s.stop(t)

	state := filepath.Join(dir, "state.json")
	if err := os.WriteFile(state, statetest.BigJSON(4000), 0o600); err != nil { // 18 MB of text
		t.Fatal(err)
	}
	asked, advised = hugeheap.Asked(), hugeAdvised()
	s = startServe(t, nil, "--addr", "127.0.0.1:0", "--state", state)
	if got := hugeheap.Asked() - asked; got != 1 {
		t.Errorf("--state of 18 MB: asked %d times, want 1", got)
	}
	noAdviceLeft(t, "--state of 18 MB", advised)
	s.stop(t)

	// both: the fixtures' world is built first, then the state's, each with its request;
	// the start leaves neither range advised
	asked, advised = hugeheap.Asked(), hugeAdvised()
	s = startServe(t, nil, "--addr", "127.0.0.1:0", "--fixtures", fixtures, "--state", state)
	if got := hugeheap.Asked() - asked; got != 2 {
		t.Errorf("--fixtures generating 20,000 deployments and --state of 18 MB: asked %d times, want 2", got)
	}
	noAdviceLeft(t, "--fixtures and --state", advised)
	s.stop(t)

	// the replay asks before it reads: a file of 4 MiB is a world of 32 MiB or more,
	// this one refused once read; a small bundle's world is left to the runtime (the
	// collector's room has a floor of 32 MiB, the world does not)
	for _, tc := range []struct {
		size  int
		asked int64
	}{
		{4 << 20, 1},
		{64 << 10, 0},
		{4<<20 - 1, 0},
	} {
		junk := filepath.Join(dir, "junk.hostemu.tgz")
		if err := os.WriteFile(junk, make([]byte, tc.size), 0o644); err != nil {
			t.Fatal(err)
		}
		asked, advised = hugeheap.Asked(), hugeAdvised()
		if code, _, stderr := runCmd(t, nil, "replay", junk, "--addr", "127.0.0.1:0"); code != 2 {
			t.Fatalf("replay of a file of zeros: exit %d, want 2\n%s", code, stderr)
		}
		if got := hugeheap.Asked() - asked; got != tc.asked {
			t.Errorf("replay of a file of %d bytes: asked %d times, want %d", tc.size, got, tc.asked)
		}
		noAdviceLeft(t, "a replay refused", advised)
	}
}

// hugeAdvised counts the mappings of the process advised for huge pages (smaps'
// VmFlags "hg"), or -1 where the kernel gives huge pages otherwise than on request or
// /proc cannot be read. A start must leave none more than it found: what the heap puts
// there after the start would get them. (Not none at all: the runtime advises its own
// metadata once a heap's goal passes 1 GiB.)
func hugeAdvised() int {
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(enabled), "[madvise]") {
		return -1
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return -1
	}
	advised := 0
	for _, line := range strings.Split(string(smaps), "\n") {
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && strings.Contains(flags+" ", " hg ") {
			advised++
		}
	}
	return advised
}

// noAdviceLeft fails the test when the start that began with before mappings advised
// for huge pages (hugeAdvised) left more.
func noAdviceLeft(t *testing.T, what string, before int) {
	t.Helper()
	if after := hugeAdvised(); before >= 0 && after > before {
		t.Errorf("%s: the start is over and %d mappings are advised for huge pages, %d before it", what, after, before)
	}
}
