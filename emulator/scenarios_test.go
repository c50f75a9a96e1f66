package emulator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func withScenario(name string) func(*emulator.Options) {
	return func(o *emulator.Options) { o.Scenario = name }
}

func TestScenarioFailingBuilds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("failing-builds"))
	fail := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	pass := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "env": map[string]string{"BUILD_SHOULD_PASS": "true"}}).JSON(t)["id"].(string)
	e.advance("1m")
	d := e.get("/v1/deployments/"+fail, "t-read").JSON(t)
	errObj, _ := d["error"].(map[string]any)
	if d["status"] != "error" || errObj["code"] != "build_failed" || errObj["message"] == "" {
		t.Fatalf("failing build: %v", d)
	}
	tm := d["timings"].(map[string]any)
	if tm["building_at"] == nil || tm["error_at"] == nil || tm["ready_at"] != nil {
		t.Errorf("timings of a failed build: %v", tm)
	}
	logs := e.get("/v1/deployments/"+fail+"/logs", "t-read").JSON(t)["logs"].([]any)
	if last := logs[len(logs)-1].(map[string]any)["text"].(string); !strings.Contains(last, "build_failed") {
		t.Errorf("last log line %q does not tell the failure", last)
	}
	if s := e.get("/v1/deployments/"+pass, "t-read").JSON(t)["status"]; s != "ready" {
		t.Errorf("BUILD_SHOULD_PASS build: %v", s)
	}
}

func TestScenarioSlowDNS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("slow-dns"))
	for _, h := range []string{"ok.example.test", "x.never.test", "never.example.test"} {
		mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": h}), 201)
	}
	status := func(h string) string {
		for _, d := range e.get("/v1/projects/prj_blog/domains", "t-read").JSON(t)["domains"].([]any) {
			if dd := d.(map[string]any); dd["hostname"] == h {
				return dd["status"].(string)
			}
		}
		return "missing"
	}
	e.advance("1m")
	if s := status("ok.example.test"); s != "pending" {
		t.Errorf("after 1m: %s, want still pending (minutes)", s)
	}
	e.advance("10m")
	if s := status("ok.example.test"); s != "active" {
		t.Errorf("after 11m: %s, want active", s)
	}
	e.advance("1d")
	if s := status("x.never.test"); s != "pending" {
		t.Errorf("*.never.test: %s, want pending forever", s)
	}
	if s := status("never.example.test"); s != "error" {
		t.Errorf("never.*: %s, want error", s)
	}
}

func TestScenarioRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("rate-limited"))
	codes := []int{}
	for i := 0; i < 3; i++ {
		codes = append(codes, e.get("/v1/projects", "t-read").Status)
	}
	if codes[0] != 200 || codes[2] != 429 {
		t.Fatalf("rate-limited scenario: %v, want 200 … 429 within a burst of 1 s at 2/s", codes)
	}
	e.advance("1s")
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
}

func TestScenarioFlaky(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("flaky"))
	fs := e.get("/_emulator/faults", "").JSON(t)["faults"].([]any)
	if len(fs) < 2 || !strings.HasPrefix(fs[0].(map[string]any)["source"].(string), "scenario:") {
		t.Fatalf("flaky's faults: %v", fs)
	}
	n503 := 0
	for i := 0; i < 12; i++ {
		if e.get("/v1/deployments/dpl_first", "t-read").Status == 503 {
			n503++
		}
	}
	hits := 0.0
	for _, f := range e.get("/_emulator/faults", "").JSON(t)["faults"].([]any) {
		hits += f.(map[string]any)["hits"].(float64)
	}
	if n503 == 0 || n503 == 12 || hits == 0 {
		t.Errorf("flaky: %d of 12 requests got 503 (%v hits), want some", n503, hits)
	}
}

func TestStrictUploads(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "strict.yaml"), "name: strict\ndescription: uploads required\ndeployments:\n  uploads: strict\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir; o.Scenario = "strict" })
	body := []byte("<h1>hi</h1>")
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digest, "a.js": digest}})
	if r.Status != 400 || r.Code() != "missing_files" {
		t.Fatalf("strict create: %d %s", r.Status, r.Code())
	}
	if missing := r.JSON(t)["error"].(map[string]any)["missing"].([]any); len(missing) != 1 || missing[0] != digest {
		t.Fatalf("missing = %v, want [%s]", missing, digest)
	}
	for _, tt := range []struct {
		name, digest string
		token        string
		status       int
		code         string
	}{
		{"wrong digest", sha, "t-deploy", 400, "digest_mismatch"},
		{"no digest", "", "t-deploy", 400, "digest_mismatch"},
		{"upper case", strings.ToUpper(digest), "t-deploy", 400, "digest_mismatch"},
		{"read scope", digest, "t-read", 403, "insufficient_scope"},
	} {
		r := e.do(req{Method: "POST", Path: "/v1/files", Token: tt.token, Body: body, Headers: map[string]string{"X-File-Digest": tt.digest, "Content-Type": "application/octet-stream"}})
		if r.Status != tt.status || r.Code() != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, r.Status, r.Code(), tt.status, tt.code)
		}
	}
	up := e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: body, Headers: map[string]string{"X-File-Digest": digest, "Content-Type": "application/octet-stream"}})
	mustStatus(t, up, 201)
	if m := up.JSON(t); m["digest"] != digest || m["size"] != float64(len(body)) {
		t.Errorf("upload answer %v", m)
	}
	mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digest}}), 201)
}

// waitReload returns a function that blocks until the emulator's scenario registry
// reloads, so tests wait on the reload itself instead of sleeping.
func waitReload(t *testing.T, e *env) func() {
	ch := make(chan struct{}, 16)
	cancel := e.emu.World().Scenarios().Subscribe(func() { ch <- struct{}{} })
	t.Cleanup(cancel)
	return func() {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("the scenario directory was not reloaded")
		}
	}
}

func TestScenarioHotReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	writeFile(t, path, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir; o.Scenario = "mine" })
	reloaded := waitReload(t, e)
	first := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)

	// a rename-style save: write a temporary file, rename it over the scenario
	tmp := filepath.Join(dir, ".mine.yaml.swp")
	writeFile(t, tmp, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1m}, {status: error, after: 1m}]\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	reloaded()
	second := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	e.advance("2s")
	if s := e.get("/v1/deployments/"+first, "t-read").JSON(t)["status"]; s != "ready" {
		t.Errorf("in-flight deployment: %v, want ready on the schedule it started with", s)
	}
	if s := e.get("/v1/deployments/"+second, "t-read").JSON(t)["status"]; s != "queued" {
		t.Errorf("new deployment after the change: %v, want queued for a minute", s)
	}
	e.advance("2m")
	if s := e.get("/v1/deployments/"+second, "t-read").JSON(t)["status"]; s != "error" {
		t.Errorf("new deployment: %v, want error", s)
	}

	// a broken save keeps the last good version and reports file and line
	writeFile(t, path, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	reloaded()
	m := e.get("/_emulator/scenarios", "").JSON(t)
	errs := m["errors"].([]any)
	if m["active"] != "mine" || len(errs) == 0 {
		t.Fatalf("scenarios after a broken save: %v", m)
	}
	pe := errs[0].(map[string]any)
	if pe["file"] != path || pe["line"] != float64(3) || !strings.Contains(pe["error"].(string), "shipped") {
		t.Errorf("problem %v, want %s line 3 naming the status", pe, path)
	}
	third := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	e.advance("2m")
	if s := e.get("/v1/deployments/"+third, "t-read").JSON(t)["status"]; s != "error" {
		t.Errorf("after a broken save the last good version is not in force: %v", s)
	}

	// a new file adds a scenario; switching to it works
	writeFile(t, filepath.Join(dir, "other.yml"), "description: added later\n")
	reloaded()
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "other"}}), 200)
}
