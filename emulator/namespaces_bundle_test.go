package emulator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// POST /_emulator/namespaces with a bundle (the dashboard's "Open a bundle") makes a
// namespace replaying it in one call, on the bundle's scenario: the server's start-up
// scenario, its file broken since the server started, has no say. The dashboard made a
// plain namespace first, which that broken file refused.
func TestNamespaceFromBundleWithBrokenStartScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	writeFile(t, path, "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir; o.Scenario = "mine" })
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503}), 201)
	mustStatus(t, e.get("/v1/projects", "t-read"), 503)
	tgz := e.do(req{Method: "POST", Path: "/_emulator/bundle", Body: `{"failure":"checkout_test.go:41: 503"}`})
	mustStatus(t, tgz, 200)

	// the start-up scenario's file breaks; the registry reloads it (as its watcher
	// would, without waiting for one)
	writeFile(t, path, "name: mine\ndeployments: [\n")
	if ps := emulator.World(e.emu).Scenarios().LoadDir(dir); len(ps) == 0 {
		t.Fatal("the broken file loaded")
	}
	if r := e.post("/_emulator/namespaces", "", nil); r.Status != 400 || r.Code() != "invalid_request" {
		t.Fatalf("a plain namespace: %d %s, want the broken file's 400", r.Status, r.Body)
	}

	r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: tgz.Body, Headers: map[string]string{"Content-Type": "application/gzip"}})
	mustStatus(t, r, 201)
	var got struct {
		nsCreated
		Bundle struct {
			Replayed struct{ Failure string } `json:"replayed"`
			Scenario string                   `json:"scenario"`
		} `json:"bundle"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Namespace, "ns_") || got.Tokens.Read == "" || got.ControlURL != e.url+got.control("") {
		t.Errorf("created: %s", r.Body)
	}
	if got.Bundle.Scenario != "mine" || got.Bundle.Replayed.Failure != "checkout_test.go:41: 503" {
		t.Errorf("what was replayed: %s", r.Body)
	}
	if journal := string(e.get(got.control("/requests"), "").Body); !strings.Contains(journal, `"replayed":true`) || !strings.Contains(journal, `"status":503`) {
		t.Errorf("the namespace's journal is not the bundle's: %.300s", journal)
	}
	if faults := string(e.get(got.control("/faults"), "").Body); !strings.Contains(faults, `"status":503`) {
		t.Errorf("the bundle's fault did not come along: %.300s", faults)
	}
}

// A bundle refused in the one call leaves no namespace behind, and the call's other
// refusals are the envelope's.
func TestNamespaceFromBundleRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := e.get("/_emulator/bundle", "").Body
	for _, tt := range []struct {
		name   string
		body   []byte
		ct     string
		status int
		code   string
	}{
		{"not gzip", []byte("not a bundle"), "application/gzip", 400, "invalid_request"},
		{"truncated", good[:len(good)/2], "application/gzip", 400, "invalid_request"},
		{"neither JSON nor a bundle", good, "text/plain", 415, "unsupported_media_type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: tt.body, Headers: map[string]string{"Content-Type": tt.ct}})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("%d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
			if list := string(e.get("/_emulator/namespaces", "").Body); strings.Contains(list, "ns_") {
				t.Errorf("a namespace was left behind: %s", list)
			}
		})
	}
	mustStatus(t, e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: good, Headers: map[string]string{"Content-Type": "application/gzip"}}), 201)
}

// A bundle refused on replay, once its namespace is made (a bundle alone over
// --max-world-bytes: 413 from the world), leaves no namespace behind either, and
// nothing counted against the bound.
func TestNamespaceFromBundleRefusedOnReplayLeavesNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.MaxWorldBytes = 4 << 20 })
	good := e.get("/_emulator/bundle", "")
	mustStatus(t, good, 200)
	m := members(t, good.Body)
	extras := hostileExtras(50_000, 1000, 8000)
	var man map[string]any
	if err := json.Unmarshal(m["manifest.json"], &man); err != nil {
		t.Fatal(err)
	}
	man["events"] = 1000 // the manifest's counts are checked against the members
	text, _ := json.Marshal(man)
	extras["manifest.json"] = string(text)
	heavy := rebuild(t, m, extras)

	r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: heavy, Headers: map[string]string{"Content-Type": "application/gzip"}})
	if r.Status != 413 || r.Code() != "payload_too_large" || !strings.Contains(r.Err(t).Message, "--max-world-bytes") {
		t.Fatalf("a bundle over the whole budget: %d %.300s", r.Status, r.Body)
	}
	if list := string(e.get("/_emulator/namespaces", "").Body); strings.Contains(list, "ns_") {
		t.Errorf("a namespace was left behind: %s", list)
	}
	if w := emulator.NamespaceWeight(e.emu); w != 0 {
		t.Errorf("%d bytes still counted", w)
	}
}

// POST /_emulator/namespaces with a bundle changes state as any control route does, so
// it is closed to web pages as they are (docs/security.md): from another origin, or a
// request of another site with no Origin, it is 403 forbidden_origin with no CORS
// header, whatever the body's type (application/gzip needs a preflight; text/plain does
// not, and is a bundle to no route), and no namespace is made. From hostemu's own
// origin the same call makes one.
func TestNamespaceFromBundleClosedToOtherOrigins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tgz := e.get("/_emulator/bundle", "")
	mustStatus(t, tgz, 200)
	for _, tt := range []struct {
		name    string
		headers map[string]string
	}{
		{"another origin", map[string]string{"Origin": "https://evil.example"}},
		{"another local port", map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"an opaque origin", map[string]string{"Origin": "null"}},
		{"another origin, as text/plain (no preflight)", map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}},
		{"another origin, as octet-stream", map[string]string{"Origin": "https://evil.example", "Content-Type": "application/octet-stream"}},
		{"no Origin, another site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"no Origin, the same site on another port", map[string]string{"Sec-Fetch-Site": "same-site"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Content-Type": "application/gzip"}
			for k, v := range tt.headers {
				h[k] = v
			}
			r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: tgz.Body, Headers: h})
			if r.Status != 403 || r.Code() != "forbidden_origin" {
				t.Errorf("%d %.300s, want 403 forbidden_origin", r.Status, r.Body)
			}
			for k := range r.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("the refusal carries %s", k)
				}
			}
			if list := string(e.get("/_emulator/namespaces", "").Body); strings.Contains(list, "ns_") {
				t.Errorf("a namespace was made: %s", list)
			}
		})
	}
	r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: tgz.Body,
		Headers: map[string]string{"Content-Type": "application/gzip", "Origin": e.url, "Sec-Fetch-Site": "same-origin"}})
	mustStatus(t, r, 201)
}

// A bundle whose scenario's source differs from the registry's of its name runs the
// bundle's own (docs/bundles.md), in a namespace made from it and in a world it is put
// into alike, and a reload of the scenarios directory that does not touch the world's
// choice (another file added) leaves it so. The reload put the registry's version of
// the name in its place, so a replay ran on the local file it was not taken with.
// Choosing the scenario by name takes the registry's, which then follows its file.
func TestBundleOwnScenarioOutlivesReloads(t *testing.T) {
	t.Parallel()
	const lifecycle = "deployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	srcDir := t.TempDir()
	writeFile(t, filepath.Join(srcDir, "mine.yaml"), "name: mine\ndescription: the bundle's\n"+lifecycle)
	src := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = srcDir; o.Scenario = "mine" })
	tgz := src.get("/_emulator/bundle", "")
	mustStatus(t, tgz, 200)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mine.yaml"), "name: mine\ndescription: local\n"+lifecycle)
	e := newEnv(t, func(o *emulator.Options) { o.ScenariosDir = dir })
	reload := func(file, text string) {
		t.Helper()
		writeFile(t, filepath.Join(dir, file), text)
		if ps := emulator.World(e.emu).Scenarios().LoadDir(dir); len(ps) > 0 {
			t.Fatal(ps)
		}
	}
	r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: tgz.Body, Headers: map[string]string{"Content-Type": "application/gzip"}})
	mustStatus(t, r, 201)
	var n nsCreated
	if err := json.Unmarshal(r.Body, &n); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/bundle", Body: tgz.Body, Headers: map[string]string{"Content-Type": "application/gzip"}}), 200)
	// the scenario a world runs, as its own bundle carries it ("the active one as it
	// is in force")
	running := func(control string) string {
		t.Helper()
		b := e.get(control+"/bundle", "")
		mustStatus(t, b, 200)
		return string(members(t, b.Body)["scenarios/mine.yaml"])
	}
	worlds := []struct{ name, control string }{{"the namespace", n.control("")}, {"the default world", "/_emulator"}}
	for _, w := range worlds {
		if got := running(w.control); !strings.Contains(got, "the bundle's") {
			t.Fatalf("%s runs %q, want the bundle's scenario", w.name, got)
		}
	}

	reload("other.yaml", "name: other\n"+lifecycle)
	for _, w := range worlds {
		if got := running(w.control); !strings.Contains(got, "the bundle's") {
			t.Errorf("after another file's reload %s runs %q, want the bundle's scenario still", w.name, got)
		}
	}

	// chosen by name, the scenario is the registry's, and follows its file
	mustStatus(t, e.do(req{Method: "PUT", Path: n.control("/scenarios/active"), Body: map[string]string{"name": "mine"}}), 200)
	reload("mine.yaml", "name: mine\ndescription: local, changed\n"+lifecycle)
	if got := running(n.control("")); !strings.Contains(got, "local, changed") {
		t.Errorf("chosen by name, then its file changed: the namespace runs %q", got)
	}
	if got := running("/_emulator"); !strings.Contains(got, "the bundle's") {
		t.Errorf("the default world, not switched, runs %q", got)
	}
}

// A bundle's media type is read as media types are (RFC 9110: the type and subtype are
// case-insensitive, parameters may follow), by POST /_emulator/namespaces and PUT
// /_emulator/bundle alike; a type that only begins like one is not one.
func TestBundleMediaTypeIsAMediaType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := e.get("/_emulator/bundle", "").Body
	for _, tt := range []struct {
		ct          string
		create, put int
		raw         bool // the OpenAPI validator matches no parameters: sent past it
	}{
		{"application/gzip", 201, 200, false},
		{"Application/GZIP", 201, 200, false},
		{"APPLICATION/X-GZIP", 201, 200, false},
		{"application/x-gzip; charset=binary", 201, 200, true},
		{"application/octet-stream ;q=1", 201, 200, true},
		{"application/gzipped", 415, 415, false},
		{"application/octet-streamy", 415, 415, false},
	} {
		t.Run(tt.ct, func(t *testing.T) {
			for _, call := range []struct {
				method, path string
				want         int
			}{{"POST", "/_emulator/namespaces", tt.create}, {"PUT", "/_emulator/bundle", tt.put}} {
				var status int
				var body []byte
				if tt.raw {
					rq, _ := http.NewRequest(call.method, e.url+call.path, bytes.NewReader(good))
					rq.Header.Set("Content-Type", tt.ct)
					res, err := http.DefaultClient.Do(rq)
					if err != nil {
						t.Fatal(err)
					}
					body, _ = io.ReadAll(res.Body)
					res.Body.Close()
					status = res.StatusCode
				} else {
					r := e.do(req{Method: call.method, Path: call.path, Body: good, Headers: map[string]string{"Content-Type": tt.ct}})
					status, body = r.Status, r.Body
				}
				if status != call.want {
					t.Errorf("%s %s: %d %.200s, want %d", call.method, call.path, status, body, call.want)
				}
			}
		})
	}
}

// At --max-namespaces, a bundle sent to POST /_emulator/namespaces is refused with 429
// before it is read: a body that would be refused as no bundle (400) gets the limit's
// answer, and a good one the same; a place freed takes the bundle again.
func TestNamespaceFromBundleAtTheLimitIsNotRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.MaxNamespaces = 1 })
	good := e.get("/_emulator/bundle", "").Body
	first := e.newNamespace(t, nil)
	for _, body := range [][]byte{[]byte("not a bundle at all"), good} {
		r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: body, Headers: map[string]string{"Content-Type": "application/gzip"}})
		if r.Status != 429 || r.Code() != "namespace_limit" {
			t.Errorf("a bundle at the limit: %d %.200s, want 429 namespace_limit", r.Status, r.Body)
		}
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: first.control("")}), 200)
	mustStatus(t, e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: good, Headers: map[string]string{"Content-Type": "application/gzip"}}), 201)
}
