package emulator

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/persist"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// openTestState starts an emulator on path with a manual clock.
func openTestState(t *testing.T, path string, compactMin ...int64) *Emulator {
	t.Helper()
	opts := Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, StateFile: path, RateLimitsOff: true}
	if len(compactMin) > 0 {
		opts.compactMin = compactMin[0]
	}
	e, err := New(opts)
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
		if _, _, _, err := e.world.Deployment(id); err != nil {
			t.Fatalf("deployment %s lost: %v", id, err)
		}
	}
}

// logSeq is the log_seq a --state snapshot file includes, 0 when unreadable.
func logSeq(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var sf struct {
		LogSeq uint64 `json:"log_seq"`
	}
	json.NewDecoder(f).Decode(&sf)
	return sf.LogSeq
}

// Compaction keeps the log bounded while writes go on, and the files at any moment
// (before, during and after a compaction) load back everything acknowledged.
func TestPersistCompaction(t *testing.T) {
	const compactMin = 8 << 10
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path, compactMin)
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
		if logSeq(path) > 0 {
			compacted++
		}
	}
	if compacted == 0 {
		t.Fatal("the log was never compacted")
	}
	e.saver.Settle()
	bound := max(compactMin, e.saver.SnapshotSize())
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

	rec, _ := persist.AppendRecord(nil, 1<<40, &state.Change{File: strings.Repeat("b", 64)})
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
	if slices.Contains(c.world.Export().Files, strings.Repeat("b", 64)) {
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

// A --state world started again where its edge has another port (the default's
// fallback when 4743 is taken, or another --tls-addr): its deployment URLs carry the
// port this process's edge has, so that they open as given.
func TestPersistedURLsMoveToThisEdge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	open := func(port int) *Emulator {
		e, err := New(Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, StateFile: path, RateLimitsOff: true, EdgeURLPort: port})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	url := func(e *Emulator, id string) string {
		d, _, _, err := e.world.Deployment(id)
		if err != nil {
			t.Fatal(err)
		}
		return d.URL
	}
	e := open(41873)
	id := createDeployment(t, e)
	if u := url(e, id); !strings.HasSuffix(u, ".hostemu.localhost:41873") {
		t.Fatalf("url %s", u)
	}
	e.Close()
	e = open(4743)
	if u := url(e, id); !strings.HasSuffix(u, ".hostemu.localhost:4743") {
		t.Fatalf("after a start on another port, the url is %s", u)
	}
	// and again wherever the next start's edge is
	e.Close()
	e = open(0) // an emulator with no listener of its own: https, no port
	defer e.Close()
	if u := url(e, id); !strings.HasSuffix(u, ".hostemu.localhost") {
		t.Fatalf("after a second start, the url is %s", u)
	}
}

// The log keeps a project's production pointer with the step that moved it, and a
// preview's steps (whose changes carry no project) leave it: after a crash, a
// production deployment that became ready serves the project, and the previews built
// after it are ready without having moved it.
func TestPersistProductionPointerThroughSteps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path)
	do := func(e *Emulator, method, target, body string) *httptest.ResponseRecorder {
		t.Helper()
		w := deployCall(e, method, target, body)
		if w.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		return w
	}
	create := func(target string) string {
		var d struct{ ID string }
		json.Unmarshal(do(e, "POST", "/v1/deployments", `{"project_id":"prj_shop","files":{},"target":"`+target+`"}`).Body.Bytes(), &d)
		return d.ID
	}
	prod := create("production")
	do(e, "POST", "/_emulator/clock/advance", `{"by":"6s"}`)
	var previews []string
	for range 3 {
		previews = append(previews, create("preview"))
	}
	do(e, "POST", "/_emulator/clock/advance", `{"by":"6s"}`) // their steps, after prod's
	e.saver.Settle()                                         // the writer idle: every step written
	copyPath := filepath.Join(dir, "copy.json")
	crashCopy(t, path, copyPath)
	c := openTestState(t, copyPath)
	var list struct {
		Projects []struct {
			ID                     string `json:"id"`
			ProductionDeploymentID string `json:"production_deployment_id"`
		} `json:"projects"`
	}
	json.Unmarshal(do(c, "GET", "/v1/projects", "").Body.Bytes(), &list)
	found := false
	for _, p := range list.Projects {
		if p.ID == "prj_shop" {
			found = true
			if p.ProductionDeploymentID != prod {
				t.Errorf("after the crash the project's production deployment is %q, want %q", p.ProductionDeploymentID, prod)
			}
		}
	}
	if !found {
		t.Fatal("prj_shop lost")
	}
	for _, id := range append(previews, prod) {
		var d struct{ Status string }
		json.Unmarshal(do(c, "GET", "/v1/deployments/"+id, "").Body.Bytes(), &d)
		if d.Status != "ready" {
			t.Errorf("after the crash %s is %q, want ready", id, d.Status)
		}
	}
}

// A world replayed from the log after a crash is the world that wrote it: random
// lifecycles of production and preview deployments, with promotes (roll backs among
// them), forced failures and rebuilds, leave the same projects (their production
// pointers) and deployments in the copy as in the live world.
func TestPersistReplayedWorldIsTheLiveOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path)
	do := func(e *Emulator, method, target, body string) []byte {
		t.Helper()
		w := deployCall(e, method, target, body)
		if w.Code >= 300 && w.Code != http.StatusConflict { // promoting one not ready
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	var ids []string
	r := rand.New(rand.NewPCG(5, 6))
	for range 120 {
		switch n := r.IntN(10); {
		case n < 3 || len(ids) == 0:
			target := []string{"production", "preview"}[r.IntN(2)]
			var d struct{ ID string }
			json.Unmarshal(do(e, "POST", "/v1/deployments", `{"project_id":"prj_shop","files":{},"target":"`+target+`"}`), &d)
			ids = append(ids, d.ID)
		case n < 6:
			do(e, "POST", "/_emulator/clock/advance", `{"by":"`+[]string{"1s", "3s", "6s"}[r.IntN(3)]+`"}`)
		case n < 8:
			do(e, "POST", "/v1/deployments/"+ids[r.IntN(len(ids))]+"/promote", "")
		default:
			status := []string{"queued", "building", "ready", "error"}[r.IntN(4)]
			do(e, "POST", "/_emulator/deployments/"+ids[r.IntN(len(ids))]+"/status", `{"status":"`+status+`"}`)
		}
	}
	e.saver.Settle()
	copyPath := filepath.Join(dir, "copy.json")
	crashCopy(t, path, copyPath)
	c := openTestState(t, copyPath)
	world := func(e *Emulator) (out struct {
		Projects    []map[string]any `json:"projects"`
		Deployments []map[string]any `json:"deployments"`
	}) {
		if err := json.Unmarshal(do(e, "GET", "/_emulator/state", ""), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	live, replayed := world(e), world(c)
	if len(live.Deployments) < len(ids) {
		t.Fatalf("the live world lists %d deployments, %d created", len(live.Deployments), len(ids))
	}
	if !reflect.DeepEqual(live.Projects, replayed.Projects) {
		t.Errorf("projects after the crash:\n%v\nwant\n%v", replayed.Projects, live.Projects)
	}
	if !reflect.DeepEqual(live.Deployments, replayed.Deployments) {
		t.Errorf("deployments after the crash differ from the live world's")
	}
}

// Changes queued while the writer writes the batch before them (into the array of the
// batch before that: the writer's queue reuses it) and while compactions run are all
// written: under -race, no queue is written while a batch in flight reads it.
func TestPersistConcurrentWritesAndSteps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	e := openTestState(t, path, 8<<10)
	const workers, each = 4, 60
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r := httptest.NewRequest("POST", "/v1/deployments", strings.NewReader(`{"project_id":"prj_shop","files":{}}`))
				r.Header.Set("Authorization", "Bearer t-deploy")
				r.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				e.Handler().ServeHTTP(rec, r)
				var d struct{ ID string }
				if json.Unmarshal(rec.Body.Bytes(), &d); rec.Code != http.StatusCreated || d.ID == "" {
					t.Errorf("create: %d %s", rec.Code, rec.Body)
					return
				}
				ids[w] = append(ids[w], d.ID)
			}
		}()
	}
	stop := make(chan struct{})
	stepped := make(chan struct{})
	go func() { // the lifecycles' steps beside the creates
		defer close(stepped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := httptest.NewRequest("POST", "/_emulator/clock/advance", strings.NewReader(`{"by":"2s"}`))
			r.Header.Set("Content-Type", "application/json")
			e.Handler().ServeHTTP(httptest.NewRecorder(), r)
		}
	}()
	wg.Wait()
	close(stop)
	<-stepped
	e.saver.Settle()
	copyPath := filepath.Join(dir, "copy.json")
	crashCopy(t, path, copyPath)
	c := openTestState(t, copyPath)
	for w := range workers {
		hasDeployments(t, c, ids[w])
		for _, id := range ids[w] {
			live, _, _, _ := e.world.Deployment(id)
			got, _, _, _ := c.world.Deployment(id)
			if live.Status != got.Status || len(live.Logs) != len(got.Logs) {
				t.Fatalf("%s after the crash: %s with %d log lines, live %s with %d", id, got.Status, len(got.Logs), live.Status, len(live.Logs))
			}
		}
	}
}

// deployCall sends one request to e's handler as the deploy token, in process, and
// gives its answer.
func deployCall(e *Emulator, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Host = "127.0.0.1"
	r.Header.Set("Authorization", "Bearer t-deploy")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, r)
	return w
}
