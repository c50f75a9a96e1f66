package emulator_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

func stateOf(t *testing.T, o emulator.Options) string {
	t.Helper()
	e, err := emulator.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b, err := json.Marshal(emulator.World(e).Export())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDefaultFixturesDeterministic(t *testing.T) {
	t.Parallel()
	o := emulator.Options{ClockMode: clock.Manual, ClockStart: testStart}
	a, b := stateOf(t, o), stateOf(t, o)
	if a != b {
		t.Fatal("two starts with one seed and --clock-start differ")
	}
	for _, tok := range []string{"hostemu-read", "hostemu-deploy", "hostemu-admin", "hostemu-cipher", "prj_demo"} {
		if !strings.Contains(a, tok) {
			t.Errorf("the default fixtures lack %s", tok)
		}
	}
	o.Seed = 2
	if c := stateOf(t, o); c == a {
		t.Fatal("another seed gives the same world")
	}
	o.Seed = 1
	o.ClockStart = testStart.Add(72 * time.Hour)
	shifted := stateOf(t, o)
	if shifted == a {
		t.Fatal("another clock start gives the same timestamps")
	}
	// whole state documents, compared with their times blanked: generic JSON on purpose
	strip := func(s string) string {
		var v any
		json.Unmarshal([]byte(s), &v)
		var walk func(any) any
		walk = func(x any) any {
			switch x := x.(type) {
			case map[string]any:
				for k, v := range x {
					if str, ok := v.(string); ok {
						if _, err := time.Parse(time.RFC3339, str); err == nil {
							x[k] = "T"
							continue
						}
					}
					x[k] = walk(v)
				}
			case []any:
				for i := range x {
					x[i] = walk(x[i])
				}
			}
			return x
		}
		b, _ := json.Marshal(walk(v))
		return string(b)
	}
	if strip(shifted) != strip(a) {
		t.Error("another clock start changes more than the timestamps")
	}
}

func TestCustomFixturesReplaceDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // testdata/fixtures.yaml
	if r := e.get("/v1/projects", "hostemu-read"); r.Status != 401 {
		t.Errorf("a default token still works with custom fixtures: %d", r.Status)
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), "tokens: [{token: a, scope: read}]\nprojects: [{id: prj_a, name: a}]\n")
	writeFile(t, filepath.Join(dir, "b.yaml"), "tokens: [{token: b, scope: admin}]\nprojects: [{id: prj_b, name: b}]\n")
	d := newEnv(t, func(o *emulator.Options) { o.Fixtures = dir })
	if n := len(decode[emulator.ProjectList](t, d.get("/v1/projects", "a")).Projects); n != 2 {
		t.Errorf("a directory of fixtures did not merge: %d projects", n)
	}
	mustStatus(t, d.get("/v1/projects", "b"), 200)

	writeFile(t, filepath.Join(dir, "c.yaml"), "projects: [{id: prj_a, name: dup}]\n")
	_, err := emulator.New(emulator.Options{Fixtures: dir})
	var ce *emulator.ConfigError
	if err == nil || !strings.Contains(err.Error(), "c.yaml:1") || !asConfigError(err, &ce) {
		t.Errorf("conflicting ids across files: %v", err)
	}
}

func TestStateFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	start := func() (*emulator.Server, *env) {
		srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, StateFile: path})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		return srv, &env{t: t, emu: srv.Emulator(), url: srv.URL()}
	}
	srv, e := start()
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	e.advance("6s")
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "kept.test"}), 201)
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no state file after shutdown: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp")); len(m) != 0 {
		t.Errorf("temporary files left behind: %v", m)
	}

	srv, e = start()
	if s := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Status; s != "ready" {
		t.Errorf("deployment after restart: %v", s)
	}
	if n := len(decode[emulator.DomainList](t, e.get("/v1/projects/prj_blog/domains", "t-read")).Domains); n != 1 {
		t.Errorf("domains after restart: %d", n)
	}
	srv.Shutdown(t.Context())

	// an interrupted write leaves a temporary file beside the state, never a torn state
	writeFile(t, filepath.Join(dir, ".state.json.123.tmp"), `{"tokens":[{"tok`)
	srv, e = start()
	mustStatus(t, e.get("/v1/deployments/"+id, "t-read"), 200)
	srv.Shutdown(t.Context())

	writeFile(t, path, `{"tokens":[{"tok`)
	if _, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", StateFile: path}); err == nil {
		t.Error("a torn state file was loaded")
	}
}

// A token revoked with the control API stays revoked after a restart with --state.
// The revoke path used to change the world without counting the change, so the saver
// had nothing to write and the token answered 200 again.
func TestStateFileKeepsRevokedToken(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	start := func() (*emulator.Server, *env) {
		srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, StateFile: path})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		return srv, &env{t: t, emu: srv.Emulator(), url: srv.URL()}
	}
	srv, e := start()
	// a first save, so that the revoke is the only change left to write
	mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, e = start()
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/tokens/t-read"}), 200)
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, e = start()
	defer srv.Shutdown(t.Context())
	if r := e.get("/v1/projects", "t-read"); r.Status != 401 || r.Code() != "invalid_token" {
		t.Fatalf("revoked token after restart: %d %s", r.Status, r.Body)
	}
}

// A fixture deployment reads like a live one: the same lifecycle (the default
// scenario's), the same log lines, the same gaps between timings.
func TestFixtureDeploymentsReadLikeLiveOnes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop",
		"files": map[string]string{"index.html": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}})).ID
	e.advance("6s")
	get := func(id string) emulator.Deployment {
		t.Helper()
		r := e.get("/v1/deployments/"+id, "t-read")
		mustStatus(t, r, 200)
		return decode[emulator.Deployment](t, r)
	}
	live, fixture := get(id), get("dpl_first")
	logs := func(d emulator.Deployment) []string {
		page := decode[emulator.LogPage](t, e.get("/v1/deployments/"+d.ID+"/logs", "t-read"))
		var out []string
		for _, l := range page.Logs {
			text := strings.ReplaceAll(strings.ReplaceAll(l.Text, d.ID, "<id>"), d.URL, "<url>")
			out = append(out, fmt.Sprintf("+%s %s", l.CreatedAt.Sub(*d.Timings.QueuedAt), text))
		}
		return out
	}
	if a, b := logs(live), logs(fixture); !slices.Equal(a, b) {
		t.Errorf("build logs differ:\nlive    %q\nfixture %q", a, b)
	}
	gaps := func(d emulator.Deployment) [2]time.Duration {
		return [2]time.Duration{d.Timings.BuildingAt.Sub(*d.Timings.QueuedAt), d.Timings.ReadyAt.Sub(*d.Timings.BuildingAt)}
	}
	if gaps(live) != gaps(fixture) {
		t.Errorf("timings differ: live %v, fixture %v", gaps(live), gaps(fixture))
	}
}
