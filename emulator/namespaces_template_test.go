package emulator_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// exportNS is a namespace's state as GET …/state exports it, with its label and
// credentials written as placeholders, so that two namespaces' states compare.
func (e *env) exportNS(t *testing.T, n nsCreated) string {
	t.Helper()
	r := e.get(n.control("/state"), "")
	mustStatus(t, r, 200)
	s := strings.NewReplacer(
		n.Tokens.Read, "READ", n.Tokens.Deploy, "DEPLOY", n.Tokens.Admin, "ADMIN", n.CipherKey, "CIPHER",
	).Replace(string(r.Body))
	return strings.ReplaceAll(s, strings.TrimPrefix(n.Namespace, "ns_"), "LABEL")
}

// Namespaces of the same fixtures start from one cached build, cloned: a change of every
// kind of object in one namespace (deployments and their logs, timings and errors,
// projects, domains and their certificates, tokens, uploads) reaches neither a
// namespace made after it nor the default world, and a reset brings the namespace back
// to the same start. Namespaces are made and reset beside the changes, so -race sees a
// clone read the cache while another namespace writes its own state.
func TestNamespacesIsolatedFromTheirTemplate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Fixtures = "" }) // the embedded fixtures: sites, generated projects
	defaultBefore := e.get("/_emulator/state", "")
	mustStatus(t, defaultBefore, 200)
	a := e.newNamespace(t, nil)
	start := e.exportNS(t, a)
	var snap struct {
		Deployments []struct{ ID, ProjectID, Status string } `json:"deployments"`
		Domains     []struct{ Hostname, Status string }      `json:"domains"`
	}
	if err := json.Unmarshal([]byte(start), &snap); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // namespaces made and reset from the same cache meanwhile
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := e.post("/_emulator/namespaces", "", nil)
			if r.Status != 201 {
				t.Errorf("create: %d %s", r.Status, r.Body)
				return
			}
			var n nsCreated
			json.Unmarshal(r.Body, &n)
			if r := e.post(n.control("/reset"), "", nil); r.Status != 200 {
				t.Errorf("reset: %d %s", r.Status, r.Body)
			}
			e.do(req{Method: "DELETE", Path: n.control("")})
		}
	}()

	// every kind of object a namespace holds, changed in a
	content := "<h1>isolated</h1>"
	digest := sha256hex(content)
	mustStatus(t, e.do(req{Method: "POST", Path: "/v1/files", Token: a.Tokens.Deploy, Body: content, Headers: map[string]string{"Content-Type": "application/octet-stream", "X-File-Digest": digest}}), 201)
	mustStatus(t, e.post("/v1/deployments", a.Tokens.Deploy, map[string]any{"project_id": "prj_demo", "files": map[string]string{"index.html": digest}}), 201)
	mustStatus(t, e.post(a.control("/deployments/dpl_demopreview/promote"), "", nil), 200)
	forced := 0
	for _, d := range snap.Deployments { // logs appended, timings and errors replaced
		to := map[string]string{"ready": "building", "error": "ready"}[d.Status]
		if to == "" {
			continue
		}
		mustStatus(t, e.post(a.control("/deployments/"+d.ID+"/status"), "", map[string]string{"status": to}), 200)
		forced++
	}
	mustStatus(t, e.post(a.control("/clock/advance"), "", map[string]string{"by": "2400h"}), 200) // lifecycles end, certificates renew
	for _, d := range snap.Domains {                                                              // certificates replaced
		mustStatus(t, e.post(a.control("/domains/"+d.Hostname+"/status"), "", map[string]string{"status": "error"}), 200)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_demo/domains/www.demo-shop.test", Token: a.Tokens.Admin}), 200)
	mustStatus(t, e.post("/v1/projects/prj_demo/domains", a.Tokens.Admin, map[string]any{"hostname": "isolated.example.test"}), 201)
	mustStatus(t, e.post(a.control("/tokens"), "", map[string]string{"scope": "admin"}), 201)
	mustStatus(t, e.do(req{Method: "DELETE", Path: a.control("/tokens/" + a.Tokens.Read)}), 200)
	if forced < 3 || len(snap.Domains) < 3 || e.exportNS(t, a) == start {
		t.Fatalf("a did not change enough: %d deployments forced, %d domains", forced, len(snap.Domains))
	}

	close(stop)
	wg.Wait()
	b := e.newNamespace(t, nil)
	if got := e.exportNS(t, b); got != start {
		t.Errorf("a namespace made after another changed starts elsewhere:\n%.2000s\nwant\n%.2000s", got, start)
	}
	if r := e.get("/_emulator/state", ""); string(r.Body) != string(defaultBefore.Body) {
		t.Errorf("the default world changed with a namespace")
	}
	mustStatus(t, e.post(a.control("/reset"), "", nil), 200)
	if got := e.exportNS(t, a); got != start {
		t.Errorf("a reset namespace starts elsewhere:\n%.2000s\nwant\n%.2000s", got, start)
	}
}

// A namespace copied from a kept build weighs, for --max-world-bytes, what one built on
// its own weighs (the copy is that build: TestTemplateCloneIsBuild), though it shares
// the parts no namespace changes (environments, file lists, timings, site contents)
// and so takes less heap than its estimate.
func TestNamespaceCopiesWeighAsBuilt(t *testing.T) {
	e := newEnv(t)
	gen := map[string]any{"fixtures": map[string]any{"sites": true, "generate": map[string]any{"projects": 20, "deployments_per_project": 60, "domains_per_project": 2}}}
	var first int64
	for i := range 3 {
		before, weighed := heapInUse(), emulator.NamespaceWeight(e.emu)
		e.newNamespace(t, gen)
		grew, counted := heapInUse()-before, emulator.NamespaceWeight(e.emu)-weighed
		t.Logf("namespace %d: heap grew %d bytes, counted %d (%.2f)", i, grew, counted, float64(grew)/float64(counted))
		if i == 0 {
			first = counted // its heap holds the kept build too
			continue
		}
		if counted != first || grew > counted || grew < counted/4 {
			t.Errorf("namespace %d: counted %d (the first: %d), heap grew %d", i, counted, first, grew)
		}
	}
}
