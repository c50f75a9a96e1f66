package emulator

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/bundle"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// An import refuses a deployment with no files (a nil map: "files": null, or no
// "files" key), as the API refuses a create without them; nothing hostemu writes has
// one, so none of its own states is refused: a deployment of the fixtures written
// without files (dpl_broken), and one created with {}, are {} in the export, a bundle,
// a namespace's state, the --state file and its log (compacted and not) and the API's
// answer; the default fixtures (sites and generated deployments) too.
func TestNothingHostemuWritesHasNoFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	e := openTestState(t, path, 1<<10)
	for i := 0; logSeq(path) == 0; i++ { // until the log was compacted into the snapshot
		if i == 200 {
			t.Fatal("the log was never compacted")
		}
		createDeployment(t, e)
	}
	created := createDeployment(t, e) // in the log after the compaction
	serve := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Host = "127.0.0.1" // the control API answers on loopback
		r.Header.Set("Authorization", "Bearer t-read")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		e.Handler().ServeHTTP(w, r)
		return w
	}
	get := func(path string) []byte {
		t.Helper()
		w := serve("GET", path, "")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	// every deployment's "files" in a state document is an object
	objects := func(what string, doc []byte) {
		t.Helper()
		var s struct {
			Deployments []struct {
				ID    string
				Files json.RawMessage
			}
		}
		if err := json.Unmarshal(doc, &s); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(s.Deployments) == 0 {
			t.Fatalf("%s: no deployments", what)
		}
		for _, d := range s.Deployments {
			if !bytes.HasPrefix(d.Files, []byte("{")) {
				t.Errorf("%s: deployment %s has files %s", what, d.ID, d.Files)
			}
		}
	}
	nonNil := func(what string, snap state.Snapshot) {
		t.Helper()
		if len(snap.Deployments) == 0 {
			t.Fatalf("%s: no deployments", what)
		}
		for _, d := range snap.Deployments {
			if d.Files == nil {
				t.Errorf("%s: deployment %s has no files map", what, d.ID)
			}
		}
	}

	export := get("/_emulator/state")
	objects("GET /_emulator/state", export)
	for _, id := range []string{"dpl_broken", created} {
		if d := get("/v1/deployments/" + id); !bytes.Contains(d, []byte(`"files":{}`)) {
			t.Errorf("GET /v1/deployments/%s: %s, want \"files\":{}", id, d)
		}
	}
	b, err := bundle.Read(bytes.NewReader(get("/_emulator/bundle")), bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nonNil("GET /_emulator/bundle", b.State)

	w := serve("POST", "/_emulator/namespaces", "")
	var ns struct{ Namespace string }
	if err := json.Unmarshal(w.Body.Bytes(), &ns); w.Code != 201 || err != nil {
		t.Fatalf("POST /_emulator/namespaces: %d %s", w.Code, w.Body)
	}
	objects("a namespace's state", get("/_emulator/namespaces/"+ns.Namespace+"/state"))

	// the export imports again
	if w := serve("PUT", "/_emulator/state", string(export)); w.Code != 200 {
		t.Fatalf("PUT /_emulator/state of its own export: %d %s", w.Code, w.Body)
	}
	createDeployment(t, e)
	// the log holds it (synced before the answer); a close compacts it into the file
	log, err := os.ReadFile(path + ".log")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(log, []byte(`"files":{}`)) || bytes.Contains(log, []byte(`"files":null`)) {
		t.Errorf("the --state log: %s", log)
	}
	// a copy of the file and its log, as a crash leaves them, starts a new emulator
	crashed := filepath.Join(t.TempDir(), "state.json")
	crashCopy(t, path, crashed)
	nonNil("the --state file and its log", openTestState(t, crashed).world.Export())

	// the file a close writes starts a new emulator too
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objects("the --state file", file)
	nonNil("the --state file", openTestState(t, path).world.Export())

	// the default fixtures: deployments given sites, and generated ones
	def, err := New(Options{ClockMode: clock.Manual})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	nonNil("the default fixtures", def.world.Export())
}
