package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// GET /_emulator/projects lists each deployment as the full deployment object: byte for
// byte what GET /v1/deployments/{id} answers (env merged over the project's, files).
func TestOverviewDeploymentIsTheFullObject(t *testing.T) {
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	w, err := world.New(world.Config{Scenarios: reg, Fixtures: func() (state.Snapshot, error) {
		return state.Snapshot{
			Tokens:   []state.Token{{Token: "t", Scope: state.ScopeRead}},
			Projects: []state.Project{{ID: "prj_a", Name: "a", CreatedAt: at, Env: map[string]string{"API": "x", "MODE": "project"}}},
			Deployments: []state.Deployment{{ID: "dpl_a", ProjectID: "prj_a", Status: state.StatusReady, Target: state.TargetPreview,
				CreatedAt: at, Env: map[string]string{"MODE": "deployment"}, Files: map[string]string{}, Timings: state.Timings{QueuedAt: &at, BuildingAt: &at, ReadyAt: &at}}},
		}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	a := New(w, Config{PublicURL: "http://emu.test"})

	get := func(path, token string) []byte {
		t.Helper()
		r := httptest.NewRequest("GET", path, nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, r)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	var o struct {
		Projects []struct{ Deployments []json.RawMessage }
	}
	if err := json.Unmarshal(get("/_emulator/projects", ""), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Projects) != 1 || len(o.Projects[0].Deployments) != 1 {
		t.Fatalf("overview: %+v", o)
	}
	want := get("/v1/deployments/dpl_a", "t")
	if got := o.Projects[0].Deployments[0]; !bytes.Equal(got, want) {
		t.Errorf("overview deployment:\n got %s\nwant %s", got, want)
	}
	if !bytes.Contains(want, []byte(`"env":{"API":"x","MODE":"deployment"}`)) {
		t.Errorf("the full object merges env over the project's: %s", want)
	}
}
