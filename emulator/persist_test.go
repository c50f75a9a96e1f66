package emulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

func TestParseLogTornTail(t *testing.T) {
	var b []byte
	var ends []int
	for i := range 5 {
		var err error
		b, err = appendRecord(b, uint64(10+i), &state.Change{File: strings.Repeat("a", 64)})
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, len(b))
	}
	whole := parseLog(b, 0)
	if whole.torn || len(whole.changes) != 5 || whole.last != 14 || whole.good != int64(len(b)) {
		t.Fatalf("whole log: torn %v, %d changes, last %d, good %d", whole.torn, len(whole.changes), whole.last, whole.good)
	}
	// cut anywhere inside the last record: the four before it stay
	for cut := ends[3] + 1; cut < ends[4]; cut++ {
		lc := parseLog(b[:cut], 0)
		if !lc.torn || len(lc.changes) != 4 || lc.good != int64(ends[3]) {
			t.Fatalf("cut at %d: torn %v, %d changes, good %d", cut, lc.torn, len(lc.changes), lc.good)
		}
	}
	// a flipped byte in the third record's payload: it and what follows are dropped
	bad := slices.Clone(b)
	bad[ends[1]+recordHeader+3] ^= 1
	if lc := parseLog(bad, 0); !lc.torn || len(lc.changes) != 2 || lc.good != int64(ends[1]) {
		t.Fatalf("corrupt record: torn %v, %d changes, good %d", lc.torn, len(lc.changes), lc.good)
	}
	// what the snapshot holds is skipped, in order
	lc := parseLog(b, 12)
	if len(lc.changes) != 2 || lc.changes[0].Seq != 13 || lc.changes[1].Seq != 14 {
		t.Fatalf("after 12: %+v", lc.changes)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	ours := []string{".state.json.123.tmp", ".state.json.log.456.tmp"}
	others := []string{".state.json.x.tmp", ".state.json.tmp", ".other.json.123.tmp", "state.json.123.tmp", ".state.json.log.tmp"}
	for _, n := range append(slices.Clone(ours), others...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := removeTemps(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, ours) {
		t.Errorf("removed %v, want %v", removed, ours)
	}
	for _, n := range others {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// openTestState starts an emulator on path with a manual clock.
func openTestState(t *testing.T, path string) *Emulator {
	t.Helper()
	e, err := New(Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, StateFile: path, RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func createDeployment(t *testing.T, e *Emulator) string {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/deployments", strings.NewReader(`{"project_id":"prj_shop","files":{}}`))
	r.Header.Set("Authorization", "Bearer t-deploy")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var d struct{ ID string }
	json.Unmarshal(w.Body.Bytes(), &d)
	return d.ID
}

// crashCopy copies the state files of a running emulator as a crash would leave them
// now: the log first, then the snapshot (a compaction writes them in the other order,
// so every pair read this way is one a crash can leave).
func crashCopy(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{".log", ""} {
		b, err := os.ReadFile(from + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func hasDeployments(t *testing.T, e *Emulator, ids []string) {
	t.Helper()
	for _, id := range ids {
		if _, _, _, err := e.World().Deployment(id); err != nil {
			t.Fatalf("deployment %s lost: %v", id, err)
		}
	}
}

// settle waits until the writer is idle: no compaction in flight, no cut of the log
// pending, and the last flush found no compaction due (the log is within its bound).
// Each round waits for the compactions registered, then has the writer flush once.
func settle(p *persister) {
	for {
		p.done.Wait()
		done := make(chan struct{})
		p.barrier <- done
		<-done
		p.mu.Lock()
		idle := !p.compacting && p.trimTo == 0 && len(p.pending) == 0
		p.mu.Unlock()
		if idle {
			return
		}
	}
}

// Compaction keeps the log bounded while writes go on, and the files at any moment
// (before, during and after a compaction) load back everything acknowledged.
func TestPersistCompaction(t *testing.T) {
	defer func(n int64) { compactMin = n }(compactMin)
	compactMin = 8 << 10
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path)
	var ids []string
	compacted := 0
	for i := range 400 {
		ids = append(ids, createDeployment(t, e))
		if i%50 == 49 {
			copyPath := filepath.Join(dir, "copy"+string(rune('a'+i/50))+".json")
			crashCopy(t, path, copyPath)
			c := openTestState(t, copyPath)
			hasDeployments(t, c, ids)
			c.Close()
		}
		if sf, _, err := readSnapshotFile(path); err == nil && sf.LogSeq > 0 {
			compacted++
		}
	}
	if compacted == 0 {
		t.Fatal("the log was never compacted")
	}
	settle(e.saver)
	bound := max(compactMin, e.saver.snapshotSize())
	if st, err := os.Stat(path + ".log"); err != nil || st.Size() > bound {
		t.Fatalf("log after compactions: %v %v (bound: max(compactMin, snapshot) = %d)", st.Size(), err, bound)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + ".log"); err != nil || st.Size() != 0 {
		t.Fatalf("log after a clean close: %v %v", st.Size(), err)
	}
	hasDeployments(t, openTestState(t, path), ids)
}

// A crash mid-append leaves a torn record: the start drops it, cleans the log and
// the temporaries, and keeps everything before it.
func TestPersistTornTailAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path)
	ids := []string{createDeployment(t, e), createDeployment(t, e)}
	crash := filepath.Join(dir, "crash.json")
	crashCopy(t, path, crash)
	e.Close()

	rec, _ := appendRecord(nil, 1<<40, &state.Change{File: strings.Repeat("b", 64)})
	f, err := os.OpenFile(crash+".log", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(rec[:len(rec)-7])
	f.Close()
	tmp := filepath.Join(dir, ".crash.json.999.tmp")
	os.WriteFile(tmp, []byte(`{"tok`), 0o644)

	c := openTestState(t, crash)
	hasDeployments(t, c, ids)
	if slices.Contains(c.World().Export().Files, strings.Repeat("b", 64)) {
		t.Error("the torn record was applied")
	}
	if st, err := os.Stat(crash + ".log"); err != nil || st.Size() != 0 {
		t.Errorf("log after start: %v %v", st.Size(), err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

// Every file --state writes may hold a secret (a minted admin token is in the log as it
// is in the state): all are 0600, a log left 0644 by an older hostemu included.
func TestStateFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path+".log", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := openTestState(t, path)
	r := httptest.NewRequest("POST", "http://127.0.0.1/_emulator/tokens", strings.NewReader(`{"scope":"admin"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("mint: %d %s", w.Code, w.Body)
	}
	createDeployment(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + ".log"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}
