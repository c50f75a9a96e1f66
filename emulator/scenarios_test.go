package emulator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

func withScenario(name string) func(*emulator.Options) {
	return func(o *emulator.Options) { o.Scenario = name }
}

func TestScenarioFailingBuilds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("failing-builds"))
	fail := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	pass := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "env": map[string]string{"BUILD_SHOULD_PASS": "true"}})).ID
	e.advance("1m")
	d := decode[emulator.Deployment](t, e.get("/v1/deployments/"+fail, "t-read"))
	if d.Status != "error" || d.Error == nil || d.Error.Code != "build_failed" || d.Error.Message == "" {
		t.Fatalf("failing build: %+v", d)
	}
	if tm := d.Timings; tm.BuildingAt == nil || tm.ErrorAt == nil || tm.ReadyAt != nil {
		t.Errorf("timings of a failed build: %+v", tm)
	}
	logs := decode[emulator.LogPage](t, e.get("/v1/deployments/"+fail+"/logs", "t-read")).Logs
	if len(logs) == 0 {
		t.Fatal("a failed build has no log")
	}
	if last := logs[len(logs)-1].Text; !strings.Contains(last, "build_failed") {
		t.Errorf("last log line %q does not tell the failure", last)
	}
	if s := decode[emulator.Deployment](t, e.get("/v1/deployments/"+pass, "t-read")).Status; s != "ready" {
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
		for _, d := range decode[emulator.DomainList](t, e.get("/v1/projects/prj_blog/domains", "t-read")).Domains {
			if d.Hostname == h {
				return d.Status
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
	fs := decode[faultList](t, e.get("/_emulator/faults", "")).Faults
	if len(fs) < 2 || !strings.HasPrefix(fs[0].Source, "scenario:") {
		t.Fatalf("flaky's faults: %+v", fs)
	}
	n503 := 0
	for i := 0; i < 12; i++ {
		if e.get("/v1/deployments/dpl_first", "t-read").Status == 503 {
			n503++
		}
	}
	var hits int64
	for _, f := range decode[faultList](t, e.get("/_emulator/faults", "")).Faults {
		hits += f.Hits
	}
	if n503 == 0 || n503 == 12 || hits == 0 {
		t.Errorf("flaky: %d of 12 requests got 503 (%v hits), want some", n503, hits)
	}
}

func TestStrictUploads(t *testing.T) {
	t.Parallel()
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
	if missing := r.Err(t).Missing; len(missing) != 1 || missing[0] != digest {
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
	if m := decode[emulator.Upload](t, up); m.Digest != digest || m.Size != len(body) {
		t.Errorf("upload answer %+v", m)
	}
	mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digest}}), 201)
}

// waitReload returns a function that blocks until the emulator's scenario registry
// reloads, so tests wait on the reload itself instead of sleeping.
func waitReload(t *testing.T, e *env) func() {
	ch := make(chan struct{}, 16)
	cancel := emulator.World(e.emu).Scenarios().Subscribe(func() { ch <- struct{}{} })
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
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	writeFile(t, path, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir; o.Scenario = "mine" })
	reloaded := waitReload(t, e)
	create := func() string {
		t.Helper()
		return decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	}
	status := func(id string) string {
		t.Helper()
		return decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Status
	}
	first := create()

	// a rename-style save: write a temporary file, rename it over the scenario
	tmp := filepath.Join(dir, ".mine.yaml.swp")
	writeFile(t, tmp, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1m}, {status: error, after: 1m}]\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	reloaded()
	second := create()
	e.advance("2s")
	if s := status(first); s != "ready" {
		t.Errorf("in-flight deployment: %v, want ready on the schedule it started with", s)
	}
	if s := status(second); s != "queued" {
		t.Errorf("new deployment after the change: %v, want queued for a minute", s)
	}
	e.advance("2m")
	if s := status(second); s != "error" {
		t.Errorf("new deployment: %v, want error", s)
	}

	// a broken save keeps the last good version and reports file and line
	writeFile(t, path, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	reloaded()
	m := decode[scenarioList](t, e.get("/_emulator/scenarios", ""))
	if m.Active != "mine" || len(m.Errors) == 0 {
		t.Fatalf("scenarios after a broken save: %+v", m)
	}
	if pe := m.Errors[0]; pe.File != path || pe.Line != 3 || !strings.Contains(pe.Error, "shipped") {
		t.Errorf("problem %+v, want %s line 3 naming the status", pe, path)
	}
	third := create()
	e.advance("2m")
	if s := status(third); s != "error" {
		t.Errorf("after a broken save the last good version is not in force: %v", s)
	}

	// a new file adds a scenario; switching to it works
	writeFile(t, filepath.Join(dir, "other.yml"), "description: added later\n")
	reloaded()
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "other"}}), 200)
}

// The active scenario's file deleted: it stays active in its last version, and says so
// everywhere (issue 25 item 7): health, the list ("deleted": true) and PUT active to it,
// refused with that reason.
func TestDeletedActiveScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	writeFile(t, path, "name: mine\ndescription: my own\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir; o.Scenario = "mine" })
	reloaded := waitReload(t, e)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	reloaded()
	h := e.get("/_emulator/health", "").JSON(t)
	if h["scenario"] != "mine" || h["scenario_deleted"] != true {
		t.Errorf("health %v: want scenario mine, scenario_deleted true", h)
	}
	m := decode[scenarioList](t, e.get("/_emulator/scenarios", ""))
	found := false
	for _, s := range m.Scenarios {
		if s.Name == "mine" {
			found = true
			if !s.Deleted {
				t.Errorf("mine listed without deleted: %+v", s)
			}
		} else if s.Deleted {
			t.Errorf("%s listed as deleted", s.Name)
		}
	}
	if m.Active != "mine" || !found {
		t.Errorf("list %+v: want the active mine, deleted", m)
	}
	r := e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "mine"}})
	if r.Status != 404 || r.Code() != "scenario_not_found" || !strings.Contains(r.Err(t).Message, "was deleted") {
		t.Errorf("PUT active mine: %d %s %s", r.Status, r.Code(), r.Body)
	}
}

// A scenario whose file is broken now cannot be chosen: a new namespace naming it and
// PUT /_emulator/scenarios/active are refused with that file's problems (file, line and
// column), rather than given the last version that parsed (issue 33 item 4). Fixed, the
// file is usable again.
func TestBrokenScenarioFileCannotBeChosen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "flaky.yaml")
	good := "name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	writeFile(t, path, good)
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir })
	reloaded := waitReload(t, e)
	writeFile(t, path, "name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	reloaded()
	want := path + ":3:"
	for _, tc := range []struct {
		name string
		r    req
	}{
		{"namespace", req{Method: "POST", Path: "/_emulator/namespaces", Body: map[string]any{"scenario": "flaky"}}},
		{"active", req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "flaky"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.r)
			if r.Status != 400 || r.Code() != "invalid_request" {
				t.Fatalf("%d %s, want 400 invalid_request", r.Status, r.Body)
			}
			if msg := r.Err(t).Message; !strings.Contains(msg, want) || !strings.Contains(msg, "shipped") || !strings.Contains(msg, `"flaky"`) {
				t.Errorf("message %q, want the scenario, %s…, and the problem", msg, want)
			}
		})
	}
	if h := decode[map[string]any](t, e.get("/_emulator/health", "")); h["scenario"] != "default" {
		t.Errorf("a refused PUT changed the active scenario: %v", h["scenario"])
	}
	// a namespace whose own document overrides the name is not stale
	mustStatus(t, e.post("/_emulator/namespaces", "", map[string]any{"scenario": "flaky", "scenarios": []string{good}}), 201)
	// fixed, it can be chosen again
	writeFile(t, path, good)
	reloaded()
	e.newNamespace(t, map[string]any{"scenario": "flaky"})
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "flaky"}}), 200)
}

// A scenario file that never parsed (so no version of it is in force) cannot be chosen
// either: PUT /_emulator/scenarios/active and a namespace naming its scenario (its
// name: when that much parsed, else the file name) are 400 invalid_request with the
// file's problems, as for a file broken after it parsed, not 404 scenario_not_found,
// which sent the user looking for a typo. A name no file claims is still 404.
func TestNeverParsedScenarioFileAnswersItsProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flaky, slow := filepath.Join(dir, "flaky.yaml"), filepath.Join(dir, "slow.yaml")
	writeFile(t, flaky, "name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	writeFile(t, slow, "description: slow\ndeployments: [\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir })
	for _, tc := range []struct{ name, want, problem string }{
		{"flaky", flaky + ":3:", "shipped"},
		{"slow", slow + ":", "slow.yaml"},
	} {
		for _, r := range []req{
			{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": tc.name}},
			{Method: "POST", Path: "/_emulator/namespaces", Body: map[string]any{"scenario": tc.name}},
		} {
			got := e.do(r)
			if got.Status != 400 || got.Code() != "invalid_request" {
				t.Errorf("%s %s %q: %d %s, want 400 invalid_request", r.Method, r.Path, tc.name, got.Status, got.Body)
				continue
			}
			if msg := got.Err(t).Message; !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.problem) || !strings.Contains(msg, strconv.Quote(tc.name)) {
				t.Errorf("%s %s %q: message %q, want the scenario, %s…, and the problem", r.Method, r.Path, tc.name, msg, tc.want)
			}
		}
	}
	r := e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "flakey-nope"}})
	if r.Status != 404 || r.Code() != "scenario_not_found" {
		t.Errorf("unknown name: %d %s", r.Status, r.Body)
	}
}

// --scenario naming a scenario whose file never parsed refuses to start with the file's
// problems, as PUT /_emulator/scenarios/active answers, not "not found"; and naming a
// built-in that such a file meant to override does not start on the built-in.
func TestStartOnNeverParsedScenarioFileNamesItsProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine, flaky, instant := filepath.Join(dir, "mine.yaml"), filepath.Join(dir, "flaky.yaml"), filepath.Join(dir, "instant.yaml")
	writeFile(t, mine, "description: mine\ndeployments: [\n")
	writeFile(t, flaky, "name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	writeFile(t, instant, "deployments: [\n")
	for _, tc := range []struct{ name, want, problem string }{
		{"mine", mine + ":", "mine.yaml"},
		{"flaky", flaky + ":3:", "shipped"},        // meant to override the built-in
		{"instant", instant + ":", "instant.yaml"}, // the same, named by its file
	} {
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, ScenariosDir: dir, Scenario: tc.name})
		if err == nil {
			e.Close()
		}
		var ce *emulator.ConfigError
		if err == nil || !asConfigError(err, &ce) {
			t.Errorf("--scenario %s: %v, want a configuration error", tc.name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "not found") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.problem) || !strings.Contains(msg, "never parsed") {
			t.Errorf("--scenario %s: %q, want the file's problems (%s…)", tc.name, msg, tc.want)
		}
	}
	// a name no file claims is still not found
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, ScenariosDir: dir, Scenario: "flakey"})
	if err == nil {
		e.Close()
	}
	if err == nil || !strings.Contains(err.Error(), `scenario "flakey" not found`) {
		t.Errorf("--scenario flakey: %v", err)
	}
}

// A rule's when: env: names are held to the env-name rule, in a --scenarios file (YAML)
// as in a namespace's JSON scenario document: a name no env can hold never matches, and
// a test relying on the rule would pass untested.
func TestScenarioWhenEnvNameIsAVariableName(t *testing.T) {
	t.Parallel()
	const want = `deployments.rules[0].when.env: "FEATURE-X" is not a variable name (letters, digits and underscores, not starting with a digit)`
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "typo.yaml"), "deployments:\n  rules:\n    - when: {env: {FEATURE-X: \"on\"}}\n      lifecycle: [{status: queued}, {status: building}, {status: error, error: {code: build_failed, message: m}}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir })
	r := e.get("/_emulator/scenarios", "")
	mustStatus(t, r, 200)
	if !strings.Contains(string(r.Body), strconv.Quote(want)[1:len(strconv.Quote(want))-1]) {
		t.Errorf("GET /_emulator/scenarios: %s, want the problem %s", r.Body, want)
	}
	doc := `{"name":"typo","deployments":{"rules":[{"when":{"env":{"FEATURE-X":"on"}},"lifecycle":[{"status":"queued"},{"status":"building"},{"status":"error","error":{"code":"build_failed","message":"m"}}]}]}}`
	r = e.post("/_emulator/namespaces", "", map[string]any{"scenarios": []string{doc}, "scenario": "typo"})
	if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, want) {
		t.Errorf("a namespace's JSON scenario: %d %s, want 400 %q", r.Status, r.Body, want)
	}
	ok := strings.Replace(doc, "FEATURE-X", "FEATURE_X", 1)
	mustStatus(t, e.post("/_emulator/namespaces", "", map[string]any{"scenarios": []string{ok}, "scenario": "typo"}), 201)
}

// A default.yaml that never parsed stops the start whether --scenario names default or
// nothing (the binary's --scenario is "default" unless given; in process it is ""): the
// default world never starts on the built-in the file meant to override, as a namespace
// created without a scenario is refused.
func TestStartOnNeverParsedDefaultYAMLNamesItsProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "default.yaml")
	writeFile(t, path, "deployments: [\n")
	for _, name := range []string{"", "default"} {
		e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, ScenariosDir: dir, Scenario: name})
		if err == nil {
			e.Close()
		}
		var ce *emulator.ConfigError
		if err == nil || !asConfigError(err, &ce) || !strings.Contains(err.Error(), path+":1:") || !strings.Contains(err.Error(), "never parsed") {
			t.Errorf("Scenario %q: %v, want a configuration error with the file's problems", name, err)
		}
	}
}
