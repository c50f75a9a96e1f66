package emulator_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/dashboard"
)

// preset is one of the dashboard's fault presets (static/presets.js).
type preset struct {
	ID, Label, Title string
	Match            map[string]any
	Fault            map[string]any
}

// dashboardPresets reads the presets the dashboard's buttons add: the JSON array of
// presets.js.
func dashboardPresets(t *testing.T) []preset {
	t.Helper()
	b, err := fs.ReadFile(dashboard.Files(), "presets.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "export const presets = [")
	end := strings.LastIndex(src, "];")
	if start < 0 || end < start {
		t.Fatal("presets.js has no `export const presets = [...];`")
	}
	var out []preset
	dec := json.NewDecoder(strings.NewReader(src[start+len("export const presets = ") : end+1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("presets.js: the array is not JSON of presets: %v", err)
	}
	return out
}

// Every dashboard preset is a fault POST /_emulator/faults takes, as the dashboard
// sends it: on the form's fields (their defaults, and a method and service chosen),
// or on its own match; and the new answers' presets do what their labels say.
func TestDashboardPresetsAreAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ps := dashboardPresets(t)
	seen := map[string]bool{}
	for _, p := range ps {
		if p.ID == "" || p.Label == "" || p.Title == "" || p.Fault == nil || seen[p.ID] {
			t.Errorf("preset %+v: want a unique id, a label, a title and a fault", p)
		}
		seen[p.ID] = true
		forms := []map[string]any{{"path": "/v1/*"}, {"path": "/v1/projects", "method": "GET", "service": "hosting"}, {}}
		if p.Match != nil {
			forms = []map[string]any{p.Match}
		}
		for _, m := range forms {
			f := map[string]any{"match": m}
			for k, v := range p.Fault {
				f[k] = v
			}
			if r := e.post("/_emulator/faults", "", f); r.Status != 201 {
				t.Errorf("preset %s on %v: %d %s", p.ID, m, r.Status, r.Body)
			}
		}
		e.clearFaults(t)
	}
	for _, id := range []string{"retryable-503", "reset", "empty", "truncate", "malformed", "wrong-type", "slow-body", "fail-production-creates", "503-reset-success"} {
		if !seen[id] {
			t.Errorf("no preset %q", id)
		}
	}

	byID := map[string]preset{}
	for _, p := range ps {
		byID[p.ID] = p
	}
	add := func(id string, match map[string]any) {
		t.Helper()
		f := map[string]any{"match": match}
		if match == nil {
			f["match"] = byID[id].Match
		}
		for k, v := range byID[id].Fault {
			f[k] = v
		}
		e.addFault(t, f)
	}
	// a 503 a client can retry: Retry-After
	add("retryable-503", map[string]any{"path": "/v1/projects"})
	if r := e.get("/v1/projects", "t-read"); r.Status != 503 || r.Header.Get("Retry-After") == "" || r.Code() != "service_unavailable" {
		t.Errorf("retryable 503: %d %v %s", r.Status, r.Header, r.Body)
	}
	// only production creates fail
	add("fail-production-creates", nil)
	if r := e.post("/v1/deployments", "t-deploy", createBody("preview")); r.Status != 201 {
		t.Errorf("a preview create: %d %s", r.Status, r.Body)
	}
	if r := e.post("/v1/deployments", "t-deploy", createBody("production")); r.Status != 503 {
		t.Errorf("a production create: %d %s", r.Status, r.Body)
	}
	e.clearFaults(t)
	// 503, then a reset, then success
	add("503-reset-success", map[string]any{"path": "/v1/projects"})
	if r := e.get("/v1/projects", "t-read"); r.Status != 503 {
		t.Errorf("first: %d", r.Status)
	}
	fire(t, e.url+"/v1/projects") // reset (Go's client may retry the GET: the pass step then)
	fire(t, e.url+"/v1/projects")
	r := e.get("/_emulator/requests?path=/v1/projects", "")
	var j struct{ Requests []struct{ Status int } }
	json.Unmarshal(r.Body, &j)
	var statuses []int
	for _, x := range j.Requests {
		statuses = append(statuses, x.Status)
	}
	last503 := 0
	for i, s := range statuses {
		if s == 503 {
			last503 = i
		}
	}
	if statuses = statuses[last503:]; len(statuses) < 3 || fmt.Sprint(statuses[:3]) != fmt.Sprint([]int{503, 0, 200}) {
		t.Errorf("503, reset, success: the journal's statuses from the 503 on are %v, want 503, 0, 200", statuses)
	}
}
