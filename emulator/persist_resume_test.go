package emulator

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// A lifecycle resumed from a --state replay (its run has no DeploymentRef: its steps
// find the deployment by id) writes the records a live one writes: a world replayed
// mid-lifecycle, stepped to the lifecycles' end (a production deployment's ready step
// moves its project's production pointer, the previews' do not), crash-copied and
// replayed again is the live world that went on without a crash.
func TestPersistResumedLifecycleStepsAsTheLiveOne(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	open := func(path string, at time.Time) *Emulator {
		t.Helper()
		e, err := New(Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: at, StateFile: path, RateLimitsOff: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	do := func(e *Emulator, method, target, body string) []byte {
		t.Helper()
		w := deployCall(e, method, target, body)
		if w.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	type world struct {
		Projects    []map[string]any `json:"projects"`
		Deployments []map[string]any `json:"deployments"`
	}
	stateOf := func(e *Emulator) (out world) {
		t.Helper()
		if err := json.Unmarshal(do(e, "GET", "/_emulator/state", ""), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(what string, got, want world) {
		t.Helper()
		if !reflect.DeepEqual(got.Projects, want.Projects) {
			t.Errorf("%s: projects\n%v\nwant\n%v", what, got.Projects, want.Projects)
		}
		if !reflect.DeepEqual(got.Deployments, want.Deployments) {
			t.Errorf("%s: deployments\n%v\nwant\n%v", what, got.Deployments, want.Deployments)
		}
	}

	livePath := filepath.Join(dir, "live.json")
	live := open(livePath, start)
	var created, production []string
	for _, target := range []string{"production", "preview", "production", "preview"} {
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(do(live, "POST", "/v1/deployments", `{"project_id":"prj_shop","files":{},"target":"`+target+`"}`), &d); err != nil || d.ID == "" {
			t.Fatalf("the created deployment's id: %q, %v", d.ID, err)
		}
		created = append(created, d.ID)
		if target == "production" {
			production = append(production, d.ID)
		}
	}
	// what the comparisons below compare is a world mid-lifecycle, then one whose
	// steps moved the production pointer: the live world says so first, so that a
	// lifecycle slower than the test's clock cannot leave them comparing two still worlds
	lived := func(what, status string, pointerMoved bool) {
		t.Helper()
		w := stateOf(live)
		for _, id := range created {
			for _, d := range w.Deployments {
				if d["id"] == id && d["status"] != status {
					t.Fatalf("%s: %s is %v, want %s", what, id, d["status"], status)
				}
			}
		}
		for _, p := range w.Projects {
			if p["id"] == "prj_shop" && slices.Contains(production, fmt.Sprint(p["production_deployment_id"])) != pointerMoved {
				t.Fatalf("%s: prj_shop's production deployment is %v (created for production: %v)", what, p["production_deployment_id"], production)
			}
		}
	}
	do(live, "POST", "/_emulator/clock/advance", `{"by":"1s"}`) // all building, from start+1s
	lived("before the crash", "building", false)
	live.saver.Settle()
	resumedPath := filepath.Join(dir, "resumed.json")
	crashCopy(t, livePath, resumedPath)
	// replayed at the instant the live lifecycles entered building, so the resumed ones
	// count from the same anchor
	resumed := open(resumedPath, start.Add(time.Second))
	same("replayed mid-lifecycle", stateOf(resumed), stateOf(live))

	for _, e := range []*Emulator{live, resumed} {
		do(e, "POST", "/_emulator/clock/advance", `{"by":"6s"}`) // ready: live steps by ref, resumed ones by id
	}
	lived("stepped", "ready", true)
	same("stepped after the replay", stateOf(resumed), stateOf(live))
	resumed.saver.Settle()
	againPath := filepath.Join(dir, "again.json")
	crashCopy(t, resumedPath, againPath)
	again := open(againPath, start.Add(7*time.Second))
	same("the resumed steps replayed", stateOf(again), stateOf(live))
	live.saver.Settle()
	livePath2 := filepath.Join(dir, "live2.json")
	crashCopy(t, livePath, livePath2)
	same("the live steps replayed", stateOf(open(livePath2, start.Add(7*time.Second))), stateOf(live))
}
