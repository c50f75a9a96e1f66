package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// A GET of a deployment held up by a fault's delay answers the state as of when it is
// answered, not as of when it arrived: a transition that fell due during the delay has
// happened (here no background goroutine fires it; the request's own read must).
func TestDelayedDeploymentReadSeesWhatFellDue(t *testing.T) {
	t.Parallel()
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if p := reg.AddInline("test", []byte("name: quick\ndeployments:\n  lifecycle:\n    - status: queued\n    - status: building\n      after: 1s\n    - status: ready\n      after: 1h\n")); len(p) > 0 {
		t.Fatal(p)
	}
	w, err := world.New(world.Config{Scenarios: reg, Scenario: "quick", RateLimitsOff: true, Fixtures: func() (state.Snapshot, error) {
		return state.Snapshot{
			Tokens:   []state.Token{{Token: "t", Scope: state.ScopeAdmin}},
			Projects: []state.Project{{ID: "prj_a", Name: "a", CreatedAt: time.Now().UTC()}},
		}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close) // never started: only requests fire what falls due
	a := New(w, Config{})
	project := "prj_a"
	d, err := w.CreateDeployment(world.NewDeployment{ProjectID: &project, Files: map[string]string{"index.html": strings.Repeat("a", 64)}})
	if err != nil {
		t.Fatal(err)
	}
	get := func() string {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/deployments/"+d.ID, nil)
		r.Header.Set("Authorization", "Bearer t")
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, r)
		var body struct{ Status string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
			t.Fatalf("GET answered %d %s", rec.Code, rec.Body)
		}
		return body.Status
	}
	for range 2 { // rendered, then answered from the rendering
		if s := get(); s != "queued" {
			t.Fatalf("status %q before the delay, want queued", s)
		}
	}
	if _, err := w.AddFault(fault.Spec{Match: fault.Match{Method: "GET", Path: "/v1/deployments/*"}, Delay: &fault.Delay{Min: 1200 * time.Millisecond, Max: 1200 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	if s := get(); s != "building" {
		t.Fatalf("status %q after a delay past the transition, want building", s)
	}
}
