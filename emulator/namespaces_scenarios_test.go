package emulator_test

import (
	"path/filepath"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A namespace given scenarios of its own sees the scenarios directory's reloads for
// every scenario it did not define, as the default world does: a file broken at its
// creation and fixed later can be chosen in it, and the version of a file's scenario
// active in it follows the file. Its registry was a snapshot taken at creation. The
// reloads are the registry's LoadDir, as its watcher would run it, without waiting.
func TestNamespaceOwnScenariosFollowReloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	writeFile(t, path, "name: mine\ndeployments: [\n") // broken from the start
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir })
	reload := func(text string) {
		t.Helper()
		writeFile(t, path, text)
		if ps := emulator.World(e.emu).Scenarios().LoadDir(dir); len(ps) > 0 {
			t.Fatal(ps)
		}
	}
	own := "name: own\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	n := e.newNamespace(t, map[string]any{"scenarios": []string{own}, "scenario": "own"})
	use := func(name string) resp {
		return e.do(req{Method: "PUT", Path: n.control("/scenarios/active"), Body: map[string]string{"name": name}})
	}
	if r := use("mine"); r.Status != 400 || r.Code() != "invalid_request" {
		t.Fatalf("the broken file's scenario: %d %s", r.Status, r.Body)
	}

	reload("name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n")
	mustStatus(t, use("mine"), 200)
	var list struct {
		Active string
		Errors []any
	}
	if err := jsonUnmarshal(e.get(n.control("/scenarios"), "").Body, &list); err != nil {
		t.Fatal(err)
	}
	if list.Active != "mine" || len(list.Errors) != 0 {
		t.Errorf("the namespace's scenarios: active %q, errors %v", list.Active, list.Errors)
	}

	// the file changes: a build now takes 10 s, in the namespace too
	reload("name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 10s}]\n")
	r := e.post("/v1/deployments", n.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r, 201)
	id := decode[emulator.DeploymentCreated](t, r).ID
	mustStatus(t, e.post(n.control("/clock/advance"), "", map[string]string{"by": "3s"}), 200)
	if got := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, n.Tokens.Read)).Status; got != "building" {
		t.Errorf("after 3 s: %s, want building (the file's new version)", got)
	}
	// its own scenario stays its own
	mustStatus(t, use("own"), 200)
}
