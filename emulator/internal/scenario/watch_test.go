package scenario_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// syncBuffer is a log sink the watcher's goroutine and the test can share.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type watcher struct {
	r       *scenario.Registry
	changed chan struct{}
	log     *syncBuffer
}

// startWatch watches dir, which must hold initial.yaml (name "initial"), and returns
// once the watcher has loaded it: its watches are in place by then.
func startWatch(tb testing.TB, dir string) *watcher {
	tb.Helper()
	w := &watcher{r: newRegistry(tb), changed: make(chan struct{}, 1), log: &syncBuffer{}}
	w.r.Subscribe(func() {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(w.log, nil))
	go func() { done <- w.r.Watch(ctx, dir, logger) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Watch: %v", err)
			}
		case <-time.After(5 * time.Second):
			tb.Error("Watch did not return after its context ended")
		}
	})
	w.waitFor(tb, "the initial load", func() bool { _, ok := w.r.Get("initial"); return ok })
	return w
}

// waitFor waits, on change notifications, until cond holds; a generous deadline only
// guards against a hung test.
func (w *watcher) waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-w.changed:
		case <-deadline:
			tb.Fatalf("timed out waiting for %s; problems %v; log:\n%s", what, w.r.Problems(), w.log.String())
		}
	}
}

func (w *watcher) description(name string) string {
	s, ok := w.r.Get(name)
	if !ok {
		return "<none>"
	}
	return s.Description
}

func newWatchedDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "scenarios")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, dir, "initial.yaml", "description: v0\n")
	return dir
}

func TestWatchInPlaceWrite(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	writeFile(t, dir, "initial.yaml", "description: v1\n")
	w.waitFor(t, "v1", func() bool { return w.description("initial") == "v1" })
	writeFile(t, dir, "added.yaml", "description: added\n")
	w.waitFor(t, "a new file", func() bool { return w.description("added") == "added" })
	if !strings.Contains(w.log.String(), "scenarios loaded") {
		t.Errorf("no reload logged:\n%s", w.log.String())
	}
}

func TestWatchRenameSave(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	// Write a temporary file and rename it over the scenario, as many editors save.
	tmp := writeFile(t, dir, ".initial.yaml.swp", "description: renamed in\n")
	if err := os.Rename(tmp, filepath.Join(dir, "initial.yaml")); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the renamed file", func() bool { return w.description("initial") == "renamed in" })
	// Move the original aside, then write a new one (vim's backup style).
	if err := os.Rename(filepath.Join(dir, "initial.yaml"), filepath.Join(dir, "initial.yaml~")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "initial.yaml", "description: rewritten\n")
	w.waitFor(t, "the rewritten file", func() bool { return w.description("initial") == "rewritten" })
}

func TestWatchBrokenFileKeepsLastGood(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	p := writeFile(t, dir, "initial.yaml", "description: v1\nfaults:\n  - status: 503\n    probabilty: 0.5\n")
	w.waitFor(t, "the problem", func() bool { return len(w.r.Problems()) > 0 })
	if got := w.r.Problems(); len(got) != 1 || got[0].File != p || got[0].Line != 4 {
		t.Errorf("problems %v, want one at line 4", got)
	}
	if got := w.description("initial"); got != "v0" {
		t.Errorf("in force %q, want the last good v0", got)
	}
	if log := w.log.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "probabilty") {
		t.Errorf("problem not logged:\n%s", log)
	}
	writeFile(t, dir, "initial.yaml", "description: v2\n")
	w.waitFor(t, "the fix", func() bool { return w.description("initial") == "v2" && len(w.r.Problems()) == 0 })
}

func TestWatchDeletedFile(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	writeFile(t, dir, "default.yaml", "name: default\ndescription: mine\n")
	w := startWatch(t, dir)
	if w.description("default") != "mine" {
		t.Fatalf("default: %q", w.description("default"))
	}
	if err := os.Remove(filepath.Join(dir, "default.yaml")); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the built-in default back", func() bool {
		s, _ := w.r.Get("default")
		return s.Source == scenario.SourceBuiltin
	})
}

func TestWatchDirectoryRecreated(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the directory's scenarios to go", func() bool { _, ok := w.r.Get("initial"); return !ok })
	if p := w.r.Problems(); len(p) != 1 || p[0].File != dir {
		t.Errorf("problems %v, want the missing directory", p)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "initial.yaml", "description: back\n")
	w.waitFor(t, "the recreated directory", func() bool { return w.description("initial") == "back" })
	// The new directory is watched too, not only its parent.
	writeFile(t, dir, "initial.yaml", "description: edited again\n")
	w.waitFor(t, "an edit in the recreated directory", func() bool { return w.description("initial") == "edited again" })
}

func TestWatchMissingDirAtStart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "later")
	r := newRegistry(t)
	changed := make(chan struct{}, 1)
	r.Subscribe(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx, dir, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	}()
	w := &watcher{r: r, changed: changed, log: &syncBuffer{}}
	w.waitFor(t, "the missing directory problem", func() bool { return len(r.Problems()) == 1 })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "initial.yaml", "description: late\n")
	w.waitFor(t, "the late directory", func() bool { return w.description("initial") == "late" })
}

func BenchmarkReload(b *testing.B) {
	dir := newWatchedDir(b)
	w := startWatch(b, dir)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		want := "v" + strconv.Itoa(i+1)
		writeFile(b, dir, "initial.yaml", "description: "+want+"\n")
		w.waitFor(b, want, func() bool { return w.description("initial") == want })
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/reload")
}

// A file caught half-written, its first chunk ending after the building step, is not
// applied (issue 25 item 6): a deployment created in the gap would stay building forever.
// The scenario in force stays the last good one until the whole file lands.
func TestWatchHalfWrittenLifecycleNotApplied(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	head := "description: v1\ndeployments:\n  lifecycle:\n    - status: queued\n    - status: building\n      after: 1s\n"
	p := writeFile(t, dir, "initial.yaml", head)
	w.waitFor(t, "the problem", func() bool { return len(w.r.Problems()) > 0 })
	if got := w.r.Problems(); len(got) != 1 || got[0].File != p || !strings.Contains(got[0].Message, "ends at building") {
		t.Errorf("problems %v, want one: ends at building", got)
	}
	if got := w.description("initial"); got != "v0" {
		t.Errorf("in force %q, want the last good v0", got)
	}
	writeFile(t, dir, "initial.yaml", head+"    - status: ready\n      after: 1s\n")
	w.waitFor(t, "the whole file", func() bool { return w.description("initial") == "v1" && len(w.r.Problems()) == 0 })
}
