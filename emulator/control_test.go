package emulator_test

import (
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func TestHealth(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "ctl"; o.Version = "1.2.3" })
	r := e.get("/_emulator/health", "")
	mustStatus(t, r, 200)
	if m := r.JSON(t); m["status"] != "ok" || m["version"] != "1.2.3" {
		t.Fatalf("health %v", m)
	}
}

func TestControlToken(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "ctl" })
	if r := e.get("/_emulator/clock", ""); r.Status != 401 || r.Code() != "missing_token" {
		t.Errorf("no token: %d %s", r.Status, r.Code())
	}
	if r := e.get("/_emulator/clock", "wrong"); r.Status != 401 || r.Code() != "invalid_token" {
		t.Errorf("wrong token: %d %s", r.Status, r.Code())
	}
	mustStatus(t, e.get("/_emulator/clock", "ctl"), 200)
	if r := e.get("/_emulator/nope", "ctl"); r.Status != 404 || r.Code() != "not_found" {
		t.Errorf("unknown control route: %d %s", r.Status, r.Code())
	}
}

func TestClock(t *testing.T) {
	e := newEnv(t)
	m := e.get("/_emulator/clock", "").JSON(t)
	if m["mode"] != "manual" || m["now"] != testStart.Format(stampFormat) {
		t.Fatalf("clock %v", m)
	}
	r := e.post("/_emulator/clock/advance", "", map[string]string{"by": "1d2h"})
	mustStatus(t, r, 200)
	if want := testStart.Add(26 * time.Hour).Format(stampFormat); r.JSON(t)["now"] != want {
		t.Errorf("after 1d2h: %v, want %s", r.JSON(t)["now"], want)
	}
	for _, tt := range []struct {
		method, path string
		body         any
		code         string
	}{
		{"POST", "/_emulator/clock/advance", map[string]string{"by": "-1s"}, "invalid_request"},
		{"POST", "/_emulator/clock/advance", map[string]string{"by": "soon"}, "invalid_request"},
		{"POST", "/_emulator/clock/advance", map[string]any{}, "invalid_request"},
		{"POST", "/_emulator/clock/advance", map[string]any{"by": 5}, "invalid_request"},
		{"PUT", "/_emulator/clock", map[string]string{"now": "2020-01-01T00:00:00Z"}, "invalid_request"},
		{"PUT", "/_emulator/clock", map[string]string{"mode": "fast"}, "invalid_request"},
		{"PUT", "/_emulator/clock", map[string]string{"now": "tomorrow"}, "invalid_request"},
	} {
		if r := e.do(req{Method: tt.method, Path: tt.path, Body: tt.body}); r.Status != 400 || r.Code() != tt.code {
			t.Errorf("%s %s %v: %d %s", tt.method, tt.path, tt.body, r.Status, r.Code())
		}
	}
	later := testStart.Add(48 * time.Hour).Format(stampFormat)
	if r := e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"now": later}}); r.JSON(t)["now"] != later {
		t.Errorf("PUT now: %s", r.Body)
	}
	r = e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"mode": "real"}})
	if r.JSON(t)["mode"] != "real" {
		t.Errorf("PUT mode real: %s", r.Body)
	}
	if r := e.post("/_emulator/clock/advance", "", map[string]string{"by": "1s"}); r.Status != 400 {
		t.Errorf("advancing a real clock: %d", r.Status)
	}
}

func TestForceStatus(t *testing.T) {
	e := newEnv(t)
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	r := e.post("/_emulator/deployments/"+id+"/status", "", map[string]string{"status": "error"})
	mustStatus(t, r, 200)
	if m := r.JSON(t); m["status"] != "error" || m["error"] == nil {
		t.Fatalf("forced error: %v", m)
	}
	e.advance("1m") // its scheduled steps were dropped
	if s := e.get("/v1/deployments/"+id, "t-read").JSON(t)["status"]; s != "error" {
		t.Errorf("forced status overwritten by the lifecycle: %v", s)
	}
	for _, tt := range []struct {
		path   string
		body   any
		status int
		code   string
	}{
		{"/_emulator/deployments/dpl_nope/status", map[string]string{"status": "ready"}, 404, "deployment_not_found"},
		{"/_emulator/deployments/" + id + "/status", map[string]string{"status": "done"}, 400, "invalid_request"},
		{"/_emulator/deployments/" + id + "/status", map[string]any{}, 400, "invalid_request"},
		{"/_emulator/domains/nope.test/status", map[string]string{"status": "active"}, 404, "domain_not_found"},
		{"/_emulator/domains/www.shop.test/status", map[string]string{"status": "gone"}, 400, "invalid_request"},
	} {
		if r := e.post(tt.path, "", tt.body); r.Status != tt.status || r.Code() != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.path, r.Status, r.Code(), tt.status, tt.code)
		}
	}
	d := e.post("/_emulator/domains/www.shop.test/status", "", map[string]string{"status": "error"}).JSON(t)
	if d["status"] != "error" || d["tls"].(map[string]any)["status"] != "error" {
		t.Errorf("forced domain error: %v", d)
	}
	d = e.post("/_emulator/domains/www.shop.test/status", "", map[string]string{"status": "active"}).JSON(t)
	if d["tls"].(map[string]any)["status"] != "issued" {
		t.Errorf("forced active domain has no certificate: %v", d)
	}
}

func TestAwait(t *testing.T) {
	e := newEnv(t)
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	r := e.post("/_emulator/await", "", map[string]string{"deployment": id, "status": "ready"})
	mustStatus(t, r, 200)
	if want := testStart.Add(6 * time.Second).Format(stampFormat); r.JSON(t)["now"] != want {
		t.Errorf("await ready answered at %v, want %s (exactly when it turned ready)", r.JSON(t)["now"], want)
	}
	r = e.post("/_emulator/await", "", map[string]string{"deployment": "dpl_broken", "status": "ready", "timeout": "1m"})
	if r.Status != 408 || r.Code() != "await_timeout" {
		t.Errorf("await that never holds: %d %s", r.Status, r.Code())
	}
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "blog.test"}), 201)
	mustStatus(t, e.post("/_emulator/await", "", map[string]string{"domain": "blog.test", "status": "active", "timeout": "1m"}), 200)
	if r := e.post("/_emulator/await", "", map[string]string{"deployment": "dpl_nope", "status": "ready"}); r.Code() != "deployment_not_found" {
		t.Errorf("await of an unknown deployment: %d %s", r.Status, r.Code())
	}
	for _, body := range []any{map[string]any{}, map[string]any{"deployment": id}, map[string]any{"deployment": id, "status": "ready", "timeout": "x"},
		map[string]any{"deployment": id, "domain": "blog.test", "status": "ready"}} {
		if r := e.post("/_emulator/await", "", body); r.Status != 400 {
			t.Errorf("await %v: %d", body, r.Status)
		}
	}
	// requests: waits for journal entries from other clients
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			http.Get(e.url + "/v1/projects")
		}
	}()
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]string{"method": "GET", "path": "/v1/projects"}, "count": 3, "timeout": "10s"})
	wg.Wait()
	mustStatus(t, r, 200)
}

func TestJournal(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.JournalSize = 4 })
	e.get("/v1/projects", "t-read")
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_nope", "files": map[string]string{}})
	e.get("/_emulator/clock", "") // control routes are not journaled
	rs := e.get("/_emulator/requests", "").JSON(t)["requests"].([]any)
	if len(rs) != 2 {
		t.Fatalf("journal %v", rs)
	}
	post := rs[1].(map[string]any)
	for k, want := range map[string]any{"method": "POST", "path": "/v1/deployments", "status": float64(404), "error_code": "project_not_found", "scope": "deploy"} {
		if post[k] != want {
			t.Errorf("entry.%s = %v, want %v", k, post[k], want)
		}
	}
	if !strings.Contains(post["body"].(string), "prj_nope") || post["time"] == nil || post["duration_ms"] == nil {
		t.Errorf("entry %v", post)
	}
	e.post("/v1/deployments", "t-read", map[string]any{"project_id": "prj_refused"}) // 403 before the body is read
	rs = e.get("/_emulator/requests?path=/v1/deployments", "").JSON(t)["requests"].([]any)
	if b := rs[len(rs)-1].(map[string]any)["body"].(string); !strings.Contains(b, "prj_refused") {
		t.Errorf("body of a request refused before its handler: %q", b)
	}
	if strings.Contains(string(e.get("/_emulator/requests", "").Body), "t-deploy") {
		t.Error("the journal holds a token")
	}
	for i := 0; i < 5; i++ {
		e.get("/v1/deployments?limit=1", "t-read")
	}
	rs = e.get("/_emulator/requests", "").JSON(t)["requests"].([]any)
	if len(rs) != 4 || rs[0].(map[string]any)["query"] != "limit=1" {
		t.Errorf("ring of 4: %v", rs)
	}
	if n := len(e.get("/_emulator/requests?method=post", "").JSON(t)["requests"].([]any)); n != 0 {
		t.Errorf("filter method=post: %d", n)
	}
	if n := len(e.get("/_emulator/requests?path=/v1/deploy*", "").JSON(t)["requests"].([]any)); n != 4 {
		t.Errorf("filter path: %d", n)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
	if n := len(e.get("/_emulator/requests", "").JSON(t)["requests"].([]any)); n != 0 {
		t.Errorf("after clear: %d", n)
	}
}

func TestFaults(t *testing.T) {
	e := newEnv(t)
	add := func(f map[string]any) string {
		t.Helper()
		r := e.post("/_emulator/faults", "", f)
		mustStatus(t, r, 201)
		return r.JSON(t)["id"].(string)
	}
	id := add(map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/deployments*"}, "status": 503, "times": 1})
	r := e.get("/v1/deployments", "t-read")
	if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("injected 503: %d %s %v", r.Status, r.Code(), r.Header)
	}
	mustStatus(t, e.get("/v1/deployments", "t-read"), 200) // times: 1
	fs := e.get("/_emulator/faults", "").JSON(t)["faults"].([]any)
	if len(fs) != 1 || fs[0].(map[string]any)["hits"] != float64(1) || fs[0].(map[string]any)["id"] != id {
		t.Fatalf("faults %v", fs)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + id}), 200)
	if r := e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + id}); r.Status != 404 || r.Code() != "fault_not_found" {
		t.Errorf("deleting twice: %d %s", r.Status, r.Code())
	}

	add(map[string]any{"match": map[string]any{"scope": "deploy"}, "status": 500, "code": "build_cluster_down", "message": "injected"})
	r = e.get("/v1/projects", "t-deploy")
	if r.Status != 500 || r.Code() != "build_cluster_down" {
		t.Errorf("scope-matched fault: %d %s", r.Status, r.Code())
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	if d := e.get("/docs/errors/build_cluster_down", ""); d.Status != 200 || !strings.Contains(string(d.Body), "injected") {
		t.Errorf("doc page of an invented code: %d", d.Status)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)

	add(map[string]any{"match": map[string]any{"path": "/v1/projects"}, "rate_limit": true})
	r = e.get("/v1/projects", "t-read")
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("rate_limit fault: %d %v", r.Status, r.Header)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)

	add(map[string]any{"match": map[string]any{"path": "/v1/projects"}, "drop": true})
	if _, err := http.Get(e.url + "/v1/projects"); err == nil {
		t.Error("drop fault: the request got an answer")
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)

	add(map[string]any{"match": map[string]any{"path": "/v1/projects"}, "timeout": true})
	c := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := c.Get(e.url + "/v1/projects")
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("timeout fault: %v", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Error("timeout fault held past the client's give-up")
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)

	add(map[string]any{"match": map[string]any{"path": "/v1/projects"}, "delay": "20ms"})
	start = time.Now()
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	if time.Since(start) < 20*time.Millisecond {
		t.Error("delay fault did not delay")
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)

	add(map[string]any{"match": map[string]any{"service": "cipher"}, "status": 503, "probability": 0})
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)

	for _, bad := range []any{
		map[string]any{},
		map[string]any{"status": 200},
		map[string]any{"status": 503, "probability": 2},
		map[string]any{"status": 503, "times": -1},
		map[string]any{"status": 503, "match": map[string]any{"service": "dns"}},
		map[string]any{"delay": "fast"},
		map[string]any{"delay": map[string]string{"min": "2s", "max": "1s"}},
		map[string]any{"status": "503"},
		"[]",
	} {
		if r := e.post("/_emulator/faults", "", bad); r.Status != 400 {
			t.Errorf("fault %v: %d %s", bad, r.Status, r.Body)
		}
	}
}

func TestResetAndState(t *testing.T) {
	e := newEnv(t)
	before := string(e.get("/_emulator/state", "").Body)
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "blog.test"})
	e.post("/_emulator/tokens", "", map[string]string{"scope": "admin"})
	e.post("/_emulator/faults", "", map[string]any{"status": 503, "match": map[string]string{"path": "/nothing"}})
	e.advance("1h")
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	if after := string(e.get("/_emulator/state", "").Body); after != before {
		t.Errorf("state after reset differs from the start:\n%s\n%s", before, after)
	}
	if m := e.get("/_emulator/clock", "").JSON(t); m["now"] != testStart.Format(stampFormat) {
		t.Errorf("manual clock after reset: %v", m)
	}
	if fs := e.get("/_emulator/faults", "").JSON(t)["faults"].([]any); len(fs) != 0 {
		t.Errorf("faults after reset: %v", fs)
	}
	if rs := e.get("/_emulator/requests", "").JSON(t)["requests"].([]any); len(rs) != 0 {
		t.Errorf("journal after reset: %v", rs)
	}
	// the same requests after a reset give the same ids
	a := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"]
	e.post("/_emulator/reset", "", nil)
	b := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"]
	if a != b {
		t.Errorf("ids after reset differ: %v, %v", a, b)
	}

	// import: a bad state changes nothing
	snap := e.get("/_emulator/state", "").Body
	bad := strings.Replace(string(snap), `"project_id":"prj_shop"`, `"project_id":"prj_gone"`, 1)
	if r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: bad}); r.Status != 400 || r.Code() != "invalid_request" {
		t.Errorf("bad import: %d %s", r.Status, r.Code())
	}
	if got := string(e.get("/_emulator/state", "").Body); got != string(snap) {
		t.Error("a refused import changed the state")
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: string(snap)}), 200)
	if got := string(e.get("/_emulator/state", "").Body); got != string(snap) {
		t.Error("export → import → export is not the identity")
	}
}

func TestScenarioSwitch(t *testing.T) {
	e := newEnv(t)
	m := e.get("/_emulator/scenarios", "").JSON(t)
	if m["active"] != "default" || len(m["scenarios"].([]any)) < 6 {
		t.Fatalf("scenarios %v", m)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "instant"}}), 200)
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	if s := e.get("/v1/deployments/"+id, "t-read").JSON(t)["status"]; s != "ready" {
		t.Errorf("instant scenario: status %v right after create", s)
	}
	if r := e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "nope"}}); r.Status != 404 || r.Code() != "scenario_not_found" {
		t.Errorf("unknown scenario: %d %s", r.Status, r.Code())
	}
}

// Review findings, each a regression test.
func TestControlEdgeCases(t *testing.T) {
	e := newEnv(t)
	snap := e.get("/_emulator/state", "").JSON(t)
	dom := snap["domains"].([]any)[0].(map[string]any)
	dom["tls"] = map[string]any{"status": "issued", "expires_at": nil, "issuer": nil}
	if r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: snap}); r.Status != 400 || r.Code() != "invalid_request" {
		t.Errorf("an issued certificate without expiry was imported: %d %s", r.Status, r.Code())
	}
	dom["status"], dom["tls"] = "verifying", map[string]any{"status": "issued", "expires_at": "2027-01-01T00:00:00Z", "issuer": "x"}
	if r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: snap}); r.Status != 400 {
		t.Errorf("a verifying domain with an issued certificate was imported: %d", r.Status)
	}

	// ids drawn after an import never collide with the imported ones
	first := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, first, 201)
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: string(e.get("/_emulator/state", "").Body)}), 200)
	second := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, second, 201)
	if first.JSON(t)["id"] == second.JSON(t)["id"] {
		t.Error("the same id twice")
	}

	for _, tt := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/_emulator/clock", map[string]string{"now": "2300-01-01T00:00:00Z"}},
		{"PUT", "/_emulator/clock", map[string]string{"mode": "real", "now": "2027-01-01T00:00:00Z"}},
		{"POST", "/_emulator/faults", map[string]any{"delay": "abc"}},
	} {
		r := e.do(req{Method: tt.method, Path: tt.path, Body: tt.body})
		if r.Status != 400 || r.Code() != "invalid_request" {
			t.Errorf("%s %s %v: %d %s", tt.method, tt.path, tt.body, r.Status, r.Code())
		}
	}
	if m := e.get("/_emulator/clock", "").JSON(t)["mode"]; m != "manual" {
		t.Errorf("a refused PUT /_emulator/clock changed the mode to %v", m)
	}
	r := e.do(req{Method: "OPTIONS", Path: "/v1/nope", Headers: map[string]string{"Origin": "http://a.test", "Access-Control-Request-Method": "GET"}})
	if r.Status != 404 || r.Code() != "not_found" || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("OPTIONS of an unknown path: %d %s %v", r.Status, r.Code(), r.Header)
	}
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]string{"path": "/v1/projects"}, "status": 408}), 201)
	if r := e.get("/v1/projects", "t-read"); r.Status != 408 || r.Code() != "request_timeout" {
		t.Errorf("a 408 fault: %d %s", r.Status, r.Code())
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"now": "2190-01-01T00:00:00Z"}}), 200)
	if r := e.post("/_emulator/clock/advance", "", map[string]string{"by": "36500d"}); r.Status != 400 || r.Code() != "invalid_request" {
		t.Errorf("advancing past 2200: %d %s", r.Status, r.Code())
	}
	mustStatus(t, e.get("/_emulator/health", ""), 200)
}

func TestResetSurvivesFixtureFileRemoval(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f.yaml"
	writeFile(t, path, "tokens: [{token: x, scope: read}]\nprojects: [{id: prj_a, name: a}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.Fixtures = path })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	mustStatus(t, e.get("/v1/projects", "x"), 200)
}

func TestSeparateCipherDocURL(t *testing.T) {
	srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", CipherAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	c := &env{t: t, emu: srv.Emulator(), url: srv.CipherURL()}
	doc := c.post("/v1/decrypt", "", map[string]string{"envelope": "x"}).JSON(t)["error"].(map[string]any)["doc_url"].(string)
	res, err := http.Get(doc)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET %s: %d", doc, res.StatusCode)
	}
}
