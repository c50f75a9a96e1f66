package emulator_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"

	"github.com/hostemu/hostemu/emulator"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "ctl"; o.Version = "1.2.3" })
	r := e.get("/_emulator/health", "")
	mustStatus(t, r, 200)
	if h := decode[health](t, r); h.Status != "ok" || h.Version != "1.2.3" {
		t.Fatalf("health %+v", h)
	}
}

func TestControlToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "ctl" })
	for _, tt := range []struct {
		name, path, token string
		status            int
		code              string
	}{
		{"no token", "/_emulator/clock", "", 401, "missing_token"},
		{"wrong token", "/_emulator/clock", "wrong", 401, "invalid_token"},
		{"control token", "/_emulator/clock", "ctl", 200, ""},
		{"one fault, wrong token", "/_emulator/faults/flt_1", "wrong", 401, "invalid_token"},
		{"one fault, none such", "/_emulator/faults/flt_1", "ctl", 404, "fault_not_found"},
		{"unknown control route", "/_emulator/nope", "ctl", 404, "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.get(tt.path, tt.token); r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("got %d %s, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}
	// two Authorization headers, even with the control token first, are refused, as
	// the hosting API refuses them
	hr, err := http.NewRequest("GET", e.url+"/_emulator/clock", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range [][]string{{"Bearer ctl", "Bearer other"}, {"", "Bearer ctl"}} {
		hr.Header["Authorization"] = vals
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 401 || !strings.Contains(string(b), `"invalid_token"`) || !strings.Contains(string(b), "2 Authorization headers") {
			t.Errorf("Authorization %q: %d %s", vals, res.StatusCode, b)
		}
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := decode[emulator.ClockView](t, e.get("/_emulator/clock", ""))
	if c.Mode != "manual" || !time.Time(c.Now).Equal(testStart) {
		t.Fatalf("clock %+v", c)
	}
	r := e.post("/_emulator/clock/advance", "", map[string]string{"by": "1d2h"})
	mustStatus(t, r, 200)
	if now := time.Time(decode[emulator.ClockView](t, r).Now); !now.Equal(testStart.Add(26 * time.Hour)) {
		t.Errorf("after 1d2h: %v, want %s", now, testStart.Add(26*time.Hour).Format(stampFormat))
	}
	for _, tt := range []struct {
		name, method, path string
		body               any
	}{
		{"advance backwards", "POST", "/_emulator/clock/advance", map[string]string{"by": "-1s"}},
		{"advance by a word", "POST", "/_emulator/clock/advance", map[string]string{"by": "soon"}},
		{"advance by nothing", "POST", "/_emulator/clock/advance", map[string]any{}},
		{"advance by a number", "POST", "/_emulator/clock/advance", map[string]any{"by": 5}},
		{"set into the past", "PUT", "/_emulator/clock", map[string]string{"now": "2020-01-01T00:00:00Z"}},
		{"unknown mode", "PUT", "/_emulator/clock", map[string]string{"mode": "fast"}},
		{"set to a word", "PUT", "/_emulator/clock", map[string]string{"now": "tomorrow"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.do(req{Method: tt.method, Path: tt.path, Body: tt.body}); r.Status != 400 || r.Code() != "invalid_request" {
				t.Errorf("%s %s %v: %d %s", tt.method, tt.path, tt.body, r.Status, r.Code())
			}
		})
	}
	later := testStart.Add(48 * time.Hour)
	r = e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"now": later.Format(stampFormat)}})
	if now := time.Time(decode[emulator.ClockView](t, r).Now); !now.Equal(later) {
		t.Errorf("PUT now: %s", r.Body)
	}
	r = e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"mode": "real"}})
	if decode[emulator.ClockView](t, r).Mode != "real" {
		t.Errorf("PUT mode real: %s", r.Body)
	}
	if r := e.post("/_emulator/clock/advance", "", map[string]string{"by": "1s"}); r.Status != 400 {
		t.Errorf("advancing a real clock: %d", r.Status)
	}
}

func TestForceStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	r := e.post("/_emulator/deployments/"+id+"/status", "", map[string]string{"status": "error"})
	mustStatus(t, r, 200)
	if d := decode[emulator.Deployment](t, r); d.Status != "error" || d.Error == nil {
		t.Fatalf("forced error: %+v", d)
	}
	e.advance("1m") // its scheduled steps were dropped
	if s := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Status; s != "error" {
		t.Errorf("forced status overwritten by the lifecycle: %v", s)
	}
	for _, tt := range []struct {
		name, path string
		body       any
		status     int
		code       string
	}{
		{"unknown deployment", "/_emulator/deployments/dpl_nope/status", map[string]string{"status": "ready"}, 404, "deployment_not_found"},
		{"unknown deployment status", "/_emulator/deployments/" + id + "/status", map[string]string{"status": "done"}, 400, "invalid_request"},
		{"no deployment status", "/_emulator/deployments/" + id + "/status", map[string]any{}, 400, "invalid_request"},
		{"unknown domain", "/_emulator/domains/nope.test/status", map[string]string{"status": "active"}, 404, "domain_not_found"},
		{"unknown domain status", "/_emulator/domains/www.shop.test/status", map[string]string{"status": "gone"}, 400, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.post(tt.path, "", tt.body); r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("%s: %d %s, want %d %s", tt.path, r.Status, r.Code(), tt.status, tt.code)
			}
		})
	}
	for _, tt := range []struct{ force, status, tls string }{
		{"error", "error", "error"},
		{"active", "active", "issued"}, // a forced active domain has its certificate
	} {
		t.Run("domain "+tt.force, func(t *testing.T) {
			r := e.post("/_emulator/domains/www.shop.test/status", "", map[string]string{"status": tt.force})
			if d := decode[emulator.Domain](t, r); d.Status != tt.status || d.TLS.Status != tt.tls {
				t.Errorf("forced domain %s: status %s, tls %s; want %s, %s", tt.force, d.Status, d.TLS.Status, tt.status, tt.tls)
			}
		})
	}
}

func TestAwait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	r := e.post("/_emulator/await", "", map[string]string{"deployment": id, "status": "ready"})
	mustStatus(t, r, 200)
	if now := time.Time(decode[emulator.AwaitResult](t, r).Now); !now.Equal(testStart.Add(6 * time.Second)) {
		t.Errorf("await ready answered at %v, want %s (exactly when it turned ready)", now, testStart.Add(6*time.Second).Format(stampFormat))
	}
	r = e.post("/_emulator/await", "", map[string]string{"deployment": "dpl_broken", "status": "ready", "timeout": "1m"})
	if r.Status != 408 || r.Code() != "await_timeout" {
		t.Errorf("await that never holds: %d %s", r.Status, r.Code())
	}
	// a timeout says where things stood: the status, the transitions and their times, how
	// far the clock moved
	r = e.post("/_emulator/await", "", map[string]string{"deployment": id, "status": "error", "timeout": "10m"})
	if msg := r.Err(t).Message; r.Status != 408 || !strings.Contains(msg, "is ready, wanted error") ||
		!strings.Contains(msg, "ready at 2026-") || !strings.Contains(msg, "the clock moved 10m0s") {
		t.Errorf("await timeout message: %s", msg)
	}
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "never.test"}), 201)
	r = e.post("/_emulator/await", "", map[string]any{"domain": "never.test", "status": "error", "timeout": "1m"})
	if msg := r.Err(t).Message; r.Status != 408 || !strings.Contains(msg, "domain never.test is active (TLS issued), wanted error") {
		t.Errorf("domain await timeout message: %s", msg)
	}
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "blog.test"}), 201)
	mustStatus(t, e.post("/_emulator/await", "", map[string]string{"domain": "blog.test", "status": "active", "timeout": "1m"}), 200)
	for _, tt := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"unknown deployment", map[string]any{"deployment": "dpl_nope", "status": "ready"}, 404, "deployment_not_found"},
		{"no condition", map[string]any{}, 400, "invalid_request"},
		{"no status", map[string]any{"deployment": id}, 400, "invalid_request"},
		{"bad timeout", map[string]any{"deployment": id, "status": "ready", "timeout": "x"}, 400, "invalid_request"},
		{"two conditions", map[string]any{"deployment": id, "domain": "blog.test", "status": "ready"}, 400, "invalid_request"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.post("/_emulator/await", "", tt.body); r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("await %v: %d %s, want %d %s", tt.body, r.Status, r.Code(), tt.status, tt.code)
			}
		})
	}
	// requests: waits for journal entries from other clients
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			if res, err := http.Get(e.url + "/v1/projects"); err == nil {
				res.Body.Close()
			}
		}
	}()
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]string{"method": "GET", "path": "/v1/projects"}, "count": 3, "timeout": "10s"})
	wg.Wait()
	mustStatus(t, r, 200)
}

func TestJournal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.JournalSize = 4 })
	journal := func(query string) []emulator.JournalEntry {
		t.Helper()
		return decode[journalPage](t, e.get("/_emulator/requests"+query, "")).Requests
	}
	e.get("/v1/projects", "t-read")
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_nope", "files": map[string]string{}})
	e.get("/_emulator/clock", "") // control routes are not journaled
	r := e.get("/_emulator/requests", "")
	rs := decode[journalPage](t, r).Requests
	if len(rs) != 2 {
		t.Fatalf("journal %+v", rs)
	}
	post := rs[1]
	if post.Method != "POST" || post.Path != "/v1/deployments" || post.Status != 404 || post.ErrorCode != "project_not_found" || post.Scope != "deploy" {
		t.Errorf("entry %+v, want POST /v1/deployments 404 project_not_found by scope deploy", post)
	}
	// duration_ms may be 0: that it is written at all is the raw shape, on purpose
	raw := r.JSON(t)["requests"].([]any)[1].(map[string]any)
	if !strings.Contains(post.Body, "prj_nope") || post.Time.IsZero() || raw["duration_ms"] == nil {
		t.Errorf("entry %+v", post)
	}
	e.post("/v1/deployments", "t-read", map[string]any{"project_id": "prj_refused"}) // 403 before the body is read
	rs = journal("?path=/v1/deployments")
	if b := rs[len(rs)-1].Body; !strings.Contains(b, "prj_refused") {
		t.Errorf("body of a request refused before its handler: %q", b)
	}
	if strings.Contains(string(e.get("/_emulator/requests", "").Body), "t-deploy") {
		t.Error("the journal holds a token")
	}
	for i := 0; i < 5; i++ {
		e.get("/v1/deployments?limit=1", "t-read")
	}
	if rs = journal(""); len(rs) != 4 || rs[0].Query != "limit=1" {
		t.Errorf("ring of 4: %+v", rs)
	}
	for _, tt := range []struct {
		query string
		n     int
	}{
		{"?method=post", 0},
		{"?path=/v1/deploy*", 4},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if n := len(journal(tt.query)); n != tt.n {
				t.Errorf("filter %s: %d, want %d", tt.query, n, tt.n)
			}
		})
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
	if n := len(journal("")); n != 0 {
		t.Errorf("after clear: %d", n)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	add := func(t *testing.T, f map[string]any) string {
		t.Helper()
		r := e.post("/_emulator/faults", "", f)
		mustStatus(t, r, 201)
		return decode[faultView](t, r).ID
	}
	id := add(t, map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/deployments*"}, "status": 503, "times": 1})
	r := e.get("/v1/deployments", "t-read")
	if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("injected 503: %d %s %v", r.Status, r.Code(), r.Header)
	}
	mustStatus(t, e.get("/v1/deployments", "t-read"), 200) // times: 1
	fs := decode[faultList](t, e.get("/_emulator/faults", "")).Faults
	if len(fs) != 1 || fs[0].Hits != 1 || fs[0].ID != id {
		t.Fatalf("faults %+v", fs)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + id}), 200)
	if r := e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + id}); r.Status != 404 || r.Code() != "fault_not_found" {
		t.Errorf("deleting twice: %d %s", r.Status, r.Code())
	}

	// one fault at a time: add it, see it act, clear the faults
	for _, tt := range []struct {
		name  string
		fault map[string]any
		check func(t *testing.T)
	}{
		{"scope-matched error", map[string]any{"match": map[string]any{"scope": "deploy"}, "status": 500, "code": "build_cluster_down", "message": "injected"}, func(t *testing.T) {
			if r := e.get("/v1/projects", "t-deploy"); r.Status != 500 || r.Code() != "build_cluster_down" {
				t.Errorf("scope-matched fault: %d %s", r.Status, r.Code())
			}
			mustStatus(t, e.get("/v1/projects", "t-read"), 200)
			if d := e.get("/docs/errors/build_cluster_down", ""); d.Status != 200 || !strings.Contains(string(d.Body), "injected") {
				t.Errorf("doc page of an invented code: %d", d.Status)
			}
		}},
		{"rate limit", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "rate_limit": true}, func(t *testing.T) {
			if r := e.get("/v1/projects", "t-read"); r.Status != 429 || r.Header.Get("Retry-After") == "" || r.Header.Get("X-RateLimit-Remaining") != "0" {
				t.Errorf("rate_limit fault: %d %v", r.Status, r.Header)
			}
		}},
		{"drop", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "drop": true}, func(t *testing.T) {
			if res, err := http.Get(e.url + "/v1/projects"); err == nil {
				res.Body.Close()
				t.Error("drop fault: the request got an answer")
			}
		}},
		{"timeout", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "timeout": true}, func(t *testing.T) {
			c := &http.Client{Timeout: 200 * time.Millisecond}
			start := time.Now()
			_, err := c.Get(e.url + "/v1/projects")
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				t.Errorf("timeout fault: %v", err)
			}
			if time.Since(start) > 30*time.Second {
				t.Error("timeout fault held past the client's give-up")
			}
		}},
		{"delay", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "delay": "20ms"}, func(t *testing.T) {
			start := time.Now()
			mustStatus(t, e.get("/v1/projects", "t-read"), 200)
			if time.Since(start) < 20*time.Millisecond {
				t.Error("delay fault did not delay")
			}
		}},
		{"probability 0", map[string]any{"match": map[string]any{"service": "cipher"}, "status": 503, "probability": 0}, func(t *testing.T) {
			mustStatus(t, e.get("/v1/projects", "t-read"), 200)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			add(t, tt.fault)
			tt.check(t)
			mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)
		})
	}

	for _, tt := range []struct {
		name string
		body any
	}{
		{"empty", map[string]any{}},
		{"status 200", map[string]any{"status": 200}},
		{"probability over 1", map[string]any{"status": 503, "probability": 2}},
		{"negative times", map[string]any{"status": 503, "times": -1}},
		{"unknown service", map[string]any{"status": 503, "match": map[string]any{"service": "dns"}}},
		{"delay a word", map[string]any{"delay": "fast"}},
		{"delay min over max", map[string]any{"delay": map[string]string{"min": "2s", "max": "1s"}}},
		{"status a string", map[string]any{"status": "503"}},
		{"an array", "[]"},
	} {
		t.Run("refused "+tt.name, func(t *testing.T) {
			if r := e.post("/_emulator/faults", "", tt.body); r.Status != 400 {
				t.Errorf("fault %v: %d %s", tt.body, r.Status, r.Body)
			}
		})
	}
}

func TestResetAndState(t *testing.T) {
	t.Parallel()
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
	if c := decode[emulator.ClockView](t, e.get("/_emulator/clock", "")); !time.Time(c.Now).Equal(testStart) {
		t.Errorf("manual clock after reset: %+v", c)
	}
	if fs := decode[faultList](t, e.get("/_emulator/faults", "")).Faults; len(fs) != 0 {
		t.Errorf("faults after reset: %+v", fs)
	}
	if rs := decode[journalPage](t, e.get("/_emulator/requests", "")).Requests; len(rs) != 0 {
		t.Errorf("journal after reset: %+v", rs)
	}
	// the same requests after a reset give the same ids
	create := func() string {
		t.Helper()
		r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
		mustStatus(t, r, 201)
		return decode[emulator.DeploymentCreated](t, r).ID
	}
	a := create()
	e.post("/_emulator/reset", "", nil)
	b := create()
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
	t.Parallel()
	e := newEnv(t)
	if m := decode[scenarioList](t, e.get("/_emulator/scenarios", "")); m.Active != "default" || len(m.Scenarios) < 6 {
		t.Fatalf("scenarios %+v", m)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "instant"}}), 200)
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})).ID
	if s := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Status; s != "ready" {
		t.Errorf("instant scenario: status %v right after create", s)
	}
	if r := e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "nope"}}); r.Status != 404 || r.Code() != "scenario_not_found" {
		t.Errorf("unknown scenario: %d %s", r.Status, r.Code())
	}
}

// Review findings, each a regression test.
func TestControlEdgeCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// the state document is edited and sent back whole: a map keeps every field as it came
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
	if decode[emulator.DeploymentCreated](t, first).ID == decode[emulator.DeploymentCreated](t, second).ID {
		t.Error("the same id twice")
	}

	for _, tt := range []struct {
		name, method, path string
		body               any
	}{
		{"clock past 2200", "PUT", "/_emulator/clock", map[string]string{"now": "2300-01-01T00:00:00Z"}},
		{"a time for a real clock", "PUT", "/_emulator/clock", map[string]string{"mode": "real", "now": "2027-01-01T00:00:00Z"}},
		{"fault delay a word", "POST", "/_emulator/faults", map[string]any{"delay": "abc"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{Method: tt.method, Path: tt.path, Body: tt.body})
			if r.Status != 400 || r.Code() != "invalid_request" {
				t.Errorf("%s %s %v: %d %s", tt.method, tt.path, tt.body, r.Status, r.Code())
			}
		})
	}
	if m := decode[emulator.ClockView](t, e.get("/_emulator/clock", "")).Mode; m != "manual" {
		t.Errorf("a refused PUT /_emulator/clock changed the mode to %v", m)
	}
	// a preflight of a path no route has (a typo) is answered, so the real request's
	// 404 not_found reaches the app rather than a failed preflight ("Network Error")
	r := e.do(req{Method: "OPTIONS", Path: "/v1/nope", Headers: map[string]string{"Origin": "http://a.test", "Access-Control-Request-Method": "GET"}})
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "http://a.test" {
		t.Errorf("OPTIONS of an unknown path: %d %s %v", r.Status, r.Code(), r.Header)
	}
	if r := e.do(req{Method: "GET", Path: "/v1/nope", Headers: map[string]string{"Origin": "http://a.test"}}); r.Status != 404 || r.Code() != "not_found" || r.Header.Get("Access-Control-Allow-Origin") != "http://a.test" || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("GET of an unknown path: %d %s %v", r.Status, r.Code(), r.Header)
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
	t.Parallel()
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
	t.Parallel()
	srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", CipherAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	c := &env{t: t, emu: srv.Emulator(), url: srv.CipherURL()}
	doc := c.post("/v1/decrypt", "", map[string]string{"envelope": "x"}).Err(t).DocURL
	res, err := http.Get(doc)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET %s: %d", doc, res.StatusCode)
	}
}

// A method a route does not have is 405 with Allow, and the message names the methods
// to use instead (HEAD on a POST-only route included).
func TestMethodNotAllowedNamesTheMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, m := range []string{"HEAD", "GET", "PUT"} {
		r := e.do(req{Method: m, Path: "/_emulator/reset"})
		if r.Status != 405 || r.Header.Get("Allow") != "POST" {
			t.Fatalf("%s /_emulator/reset: %d %v", m, r.Status, r.Header)
		}
		if m != "HEAD" && !strings.Contains(r.Err(t).Message, "it answers POST") {
			t.Fatalf("%s /_emulator/reset: %s", m, r.Body)
		}
	}
}

// The control API's input is strict: an unknown key in a body, at any depth, an unknown
// query filter and an unknown enum value are 400 invalid_request naming them and the
// closest known one, so a typo in a test fails loudly instead of passing vacuously.
func TestControlInputIsStrict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"fault match key", "POST", "/_emulator/faults", map[string]any{"match": map[string]any{"paht": "/v1/deployments"}, "status": 503}, `unknown key "paht" in match (did you mean "path"?)`},
		{"fault key", "POST", "/_emulator/faults", map[string]any{"status": 503, "time": 1}, `unknown key "time" (did you mean "times"?)`},
		{"fault method", "POST", "/_emulator/faults", map[string]any{"match": map[string]any{"method": "PSOT"}, "status": 503}, `did you mean "POST"?`},
		{"fault service", "POST", "/_emulator/faults", map[string]any{"match": map[string]any{"service": "hostnig"}, "status": 503}, `did you mean "hosting"?`},
		{"delay key", "POST", "/_emulator/faults", map[string]any{"delay": map[string]any{"min": "1s", "maks": "2s"}}, `field "delay": unknown key "maks" (did you mean "max"?)`},
		{"namespace seed", "POST", "/_emulator/namespaces", map[string]any{"sed": 3}, `unknown key "sed" (did you mean "seed"?)`},
		{"await key", "POST", "/_emulator/await", map[string]any{"deploymnet": "dpl_first", "status": "ready"}, `unknown key "deploymnet" (did you mean "deployment"?)`},
		{"await requests key", "POST", "/_emulator/await", map[string]any{"requests": map[string]any{"metod": "GET"}, "count": 1}, `unknown key "metod" in requests (did you mean "method"?)`},
		{"await deployment status", "POST", "/_emulator/await", map[string]any{"deployment": "dpl_first", "status": "redy"}, `"status": "redy" is not a deployment status (did you mean "ready"?)`},
		{"await domain status", "POST", "/_emulator/await", map[string]any{"domain": "shop.test", "status": "activ"}, `"status": "activ" is not a domain status (did you mean "active"?)`},
		{"await status far off", "POST", "/_emulator/await", map[string]any{"deployment": "dpl_first", "status": "shipped"}, `"shipped" is not a deployment status; it is one of queued, building, ready or error`},
		{"await no status", "POST", "/_emulator/await", map[string]any{"deployment": "dpl_first"}, `field "status" is required: a deployment status, one of queued, building, ready or error`},
		{"clock key", "PUT", "/_emulator/clock", map[string]any{"mod": "manual"}, `unknown key "mod" (did you mean "mode"?)`},
		{"advance key", "POST", "/_emulator/clock/advance", map[string]any{"bye": "1s"}, `unknown key "bye" (did you mean "by"?)`},
		{"token key", "POST", "/_emulator/tokens", map[string]any{"scop": "read"}, `unknown key "scop" (did you mean "scope"?)`},
		{"forced status key", "POST", "/_emulator/deployments/dpl_first/status", map[string]any{"stauts": "error"}, `unknown key "stauts" (did you mean "status"?)`},
		{"scenario key", "PUT", "/_emulator/scenarios/active", map[string]any{"nmae": "default"}, `unknown key "nmae" (did you mean "name"?)`},
		{"journal filter", "GET", "/_emulator/requests?stauts=503", nil, `unknown query parameter "stauts" (did you mean "status"?)`},
		{"journal filter value", "GET", "/_emulator/requests?method=PSOT", nil, `method "PSOT" is not an HTTP method (did you mean "POST"?)`},
		{"journal filter typo", "GET", "/_emulator/requests?methd=GET", nil, `unknown query parameter "methd" (did you mean "method"?)`},
		{"a key given twice", "POST", "/_emulator/tokens", `{"scope":"admin","scope":"read"}`, `key "scope" is given twice: give it once`},
		{"a key given twice deep down", "POST", "/_emulator/faults", `{"status":503,"match":{"path":"/v1/projects","path":"/v1/deployments"}}`, `key "path" in match is given twice`},
		{"a key given twice in a map", "POST", "/_emulator/faults", `{"status":503,"match":{"query":{"limit":"1","limit":"2"}}}`, `key "limit" in match.query is given twice`},
		{"one field in two cases", "POST", "/_emulator/faults", `{"status":503,"Status":500}`, `keys "Status" and "status" both set "status": give it once`},
		{"one header in two cases", "POST", "/_emulator/faults", map[string]any{"status": 503, "match": map[string]any{"headers": map[string]string{"X-Team": "a", "x-team": "b"}}}, `match.headers "x-team": names the same header as "X-Team"; give it once`},
		{"a delay past a day", "POST", "/_emulator/faults", map[string]any{"delay": "999999h"}, `delay 999999h0m0s: at most 24h0m0s`},
		{"a delay range past a day", "POST", "/_emulator/faults", map[string]any{"delay": map[string]string{"min": "1s", "max": "2d"}, "delay_clock": "emulated"}, `delay 48h0m0s: at most 24h0m0s`},
		{"a then step's delay past a day", "POST", "/_emulator/faults", map[string]any{"then": []any{map[string]any{"delay": "25h"}}}, `at most 24h0m0s`},
		{"journal filter badly escaped", "GET", "/_emulator/requests?path=%ZZ", nil, `the query string: invalid URL escape "%ZZ"`},
		{"journal filter given twice", "GET", "/_emulator/requests?status=404&status=500", nil, `query parameter "status" is given 2 times: it takes one value`},
		{"journal status out of range names the value sent", "GET", "/_emulator/requests?status=4044", nil, `status 4044: want an HTTP status from 100 to 599`},
		{"journal status far out of range", "GET", "/_emulator/requests?status=99999999999", nil, `status 99999999999: want an HTTP status from 100 to 599`},
		{"journal bogus", "GET", "/_emulator/requests?bogus=1", nil, `unknown query parameter "bogus"`},
		{"a route that takes none", "GET", "/_emulator/faults?all=1", nil, `takes none`},
		// a malformed value is named by its field and place, in hostemu's words
		{"a fault's from not a time", "POST", "/_emulator/faults", map[string]any{"status": 503, "from": "yesterday"}, `key "from": "yesterday" is not an RFC 3339 time like 2026-11-01T10:00:00Z`},
		{"a query matcher's value a number", "POST", "/_emulator/faults", `{"status":503,"match":{"query":{"a":"x","b":5}}}`, `key "b" in match.query must be a string, not number`},
		{"a then step's header a number", "POST", "/_emulator/faults", `{"then":[{"headers":{"X-A":5}}]}`, `key "X-A" in then.headers must be a string, not number`},
		{"a fault's until a number", "POST", "/_emulator/faults", map[string]any{"status": 503, "until": 5}, `key "until": 5 is not an RFC 3339 time like 2026-11-01T10:00:00Z`},
		{"a then step's delay not a duration", "POST", "/_emulator/faults", map[string]any{"then": []any{map[string]any{"delay": "soon"}}}, `field "then.delay": invalid duration "soon"`},
		{"a then step's delay range", "POST", "/_emulator/faults", map[string]any{"then": []any{map[string]any{"delay": map[string]string{"min": "x", "max": "1s"}}}}, `field "then.delay.min": invalid duration "x"`},
		{"a count not whole", "POST", "/_emulator/await", `{"requests":{"status":500},"count":1.5}`, `field "count" must be an integer, not 1.5`},
		{"a count out of range", "POST", "/_emulator/await", `{"requests":{"status":500},"count":1e400}`, `field "count" must be an integer, not 1e400`},
		{"a since below zero", "POST", "/_emulator/await", `{"requests":{"since":-1},"count":1}`, `field "requests.since" must be an integer from 0 to 18446744073709551615, not -1`},
		{"a since not a number", "POST", "/_emulator/await", `{"requests":{"since":"x"},"count":1}`, `field "requests.since" must be a number, not string`},
		{"a rate out of range", "PUT", "/_emulator/clock", `{"mode":"scaled","rate":1e400}`, `field "rate" must be a number from -1.8e308 to 1.8e308, not 1e400`},
		{"a seed out of range", "POST", "/_emulator/namespaces", `{"seed":99999999999999999999}`, `field "seed" must be an integer from -9223372036854775808 to 9223372036854775807, not 99999999999999999999`},
		{"forced deployment status", "POST", "/_emulator/deployments/dpl_first/status", map[string]any{"status": "redy"}, `field "status": "redy" is not a deployment status (did you mean "ready"?); it is one of queued, building, ready or error`},
		{"forced domain status", "POST", "/_emulator/domains/shop.test/status", map[string]any{"status": "activ"}, `field "status": "activ" is not a domain status (did you mean "active"?); it is one of pending, verifying, active or error`},
		{"token scope", "POST", "/_emulator/tokens", map[string]any{"scope": "raed"}, `field "scope" must be read, deploy or admin, not "raed" (did you mean "read"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(req{Method: tc.method, Path: tc.path, Body: tc.body})
			if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
				t.Fatalf("%s %s %v: %d %s", tc.method, tc.path, tc.body, r.Status, r.Body)
			}
		})
	}
	// and nothing was added by the refused requests
	if r := e.get("/_emulator/faults", ""); strings.Contains(string(r.Body), `"id"`) {
		t.Fatalf("a refused fault was added: %s", r.Body)
	}
	// the known spellings pass, the public API stays lenient
	mustStatus(t, e.get("/_emulator/requests?method=GET&path=/v1/*", ""), 200)
	// a list repeats; a day of delay is allowed
	mustStatus(t, e.get("/_emulator/coverage?ignore=internal_error&ignore=POST%20/v1/files", ""), 200)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "delay": "1d", "delay_clock": "emulated", "times": 1}), 201)
	mustStatus(t, e.do(req{Method: "POST", Path: "/_emulator/faults", Body: `{"status":503,"match":{"headers":{"X-Team":"a","X-Other":"a"},"path":"/v1/projects"}}`}), 201)
	mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "unknown_field": 1}), 201)
}

// A reset restarts the fault dice too: a probability fault fires after a reset exactly
// as it did after the start, in the default world and in a namespace.
func TestResetRestartsTheFaultDice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.newNamespace(t, nil)
	for _, tc := range []struct{ name, control, token string }{
		{"default world", "/_emulator", "t-read"},
		{"namespace", n.control(""), n.Tokens.Read},
	} {
		pattern := func() string {
			mustStatus(t, e.post(tc.control+"/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503, "probability": 0.5}), 201)
			var b strings.Builder
			for range 40 {
				b.WriteString(fmt.Sprint(e.get("/v1/projects", tc.token).Status / 100))
			}
			return b.String()
		}
		first := pattern()
		mustStatus(t, e.post(tc.control+"/reset", "", nil), 200)
		if again := pattern(); again != first || !strings.Contains(first, "2") || !strings.Contains(first, "5") {
			t.Errorf("%s: after the start %s, after a reset %s", tc.name, first, again)
		}
	}
}

func TestFaultUnknownMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"method": "PSOT"}, "status": 503})
	if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, `did you mean "POST"?`) {
		t.Fatalf("fault with method PSOT: %d %s %s", r.Status, r.Code(), r.Body)
	}
}

func TestScenarioNameDidYouMean(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "instnat"}})
	if r.Status != 404 || r.Code() != "scenario_not_found" || !strings.Contains(r.Err(t).Message, `did you mean "instant"?`) {
		t.Errorf("PUT active instnat: %d %s %s", r.Status, r.Code(), r.Body)
	}
	_, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, Scenario: "slow-dsn"})
	if err == nil || !strings.Contains(err.Error(), `did you mean "slow-dns"?`) {
		t.Errorf("--scenario slow-dsn: %v", err)
	}
}

// The journal answers the queries a test writer asks (issue 25, item 5): every entry
// is numbered, and status, service, scope, code, since, limit and a body match select
// them; a bad value is 400 naming it. An await counts with the same filters.
func TestJournalQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	journal := func(query string) []emulator.JournalEntry {
		t.Helper()
		r := e.get("/_emulator/requests"+query, "")
		mustStatus(t, r, 200)
		return decode[journalPage](t, r).Requests
	}
	e.get("/v1/projects", "t-read")                                                                                                       // seq 1, 200 read
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_nope", "target": "production", "files": map[string]string{}}) // seq 2, 404 deploy
	e.post("/v1/deployments", "t-read", map[string]any{"project_id": "prj_shop"})                                                         // seq 3, 403 read
	e.post("/v1/encrypt", "", map[string]any{"plaintext": "x"})                                                                           // seq 4, cipher
	all := journal("")
	for i, r := range all {
		if r.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, r.Seq)
		}
	}
	seqs := func(rs []emulator.JournalEntry) (out []uint64) {
		for _, r := range rs {
			out = append(out, r.Seq)
		}
		return out
	}
	for _, tt := range []struct {
		query string
		want  []uint64
	}{
		{"?status=404", []uint64{2}},
		{"?service=cipher", []uint64{4}},
		{"?scope=read", []uint64{1, 3}},
		{"?code=project_not_found", []uint64{2}},
		{"?since=2", []uint64{3, 4}},
		{"?since=1&limit=2", []uint64{2, 3}},
		{"?body=target=production", []uint64{2}},
		{"?body=project_id", []uint64{2, 3}},
		{"?method=POST&scope=read", []uint64{3}},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if got := seqs(journal(tt.query)); !slices.Equal(got, tt.want) {
				t.Errorf("%s: seqs %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	for _, tt := range []struct{ query, says string }{
		{"?service=hostin", `did you mean "hosting"`},
		{"?scope=writer", `scope "writer"`},
		{"?status=abc", `"status"`},
		{"?status=42", "status 42"},
		{"?limit=0", `"limit"`},
		{"?since=-1", `"since"`},
		{"?body=files[x]", "index"},
		{"?bogus=1", `unknown query parameter "bogus"`},
		{"?code=rate_limted", `code "rate_limted" is not an error code hostemu answers (did you mean "rate_limited"?)`},
		{"?code=droped", `did you mean "dropped"?`},
		{"?code=Rate_Limited", `did you mean "rate_limited"?`},
	} {
		t.Run("refused "+tt.query, func(t *testing.T) {
			r := e.get("/_emulator/requests"+tt.query, "")
			mustEnvelope(t, r, 400, "invalid_request")
			msg, _ := r.JSON(t)["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, tt.says) {
				t.Errorf("%s: message %q does not say %q", tt.query, msg, tt.says)
			}
		})
	}
	// the sequence goes on across DELETE, and restarts at a reset
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
	e.get("/v1/projects", "t-read")
	if got := seqs(journal("")); !slices.Equal(got, []uint64{5}) {
		t.Errorf("after DELETE: seqs %v, want [5]", got)
	}
	mustStatus(t, e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"scope": "read", "since": 4}, "timeout": "1s"}), 200)
	mustEnvelope(t, e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"service": "edg"}, "timeout": "1s"}), 400, "invalid_request")
	mustEnvelope(t, e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"code": "service_unavailabe"}, "timeout": "1s"}), 400, "invalid_request")
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	e.get("/v1/projects", "t-read")
	if got := seqs(journal("")); !slices.Equal(got, []uint64{1}) {
		t.Errorf("after reset: seqs %v, want [1]", got)
	}
}

// A journal query's or await's code is one some answer can carry: the catalogue's, a
// status's (a fault of only a status: request_timeout), dropped, timeout, or a fault's
// own code while the fault lives or the journal holds an entry with it; anything else
// is 400 naming the closest, so a typo cannot make an await or a query find nothing.
func TestJournalCodeFilterKnowsEveryCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, code := range []string{"rate_limited", "request_timeout", "bad_gateway", "dropped", "timeout", "unknown_host"} {
		mustStatus(t, e.get("/_emulator/requests?code="+code, ""), 200)
	}
	mustEnvelope(t, e.get("/_emulator/requests?code=teapot_brewing", ""), 400, "invalid_request")
	r := e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"operation": "listProjects"}, "status": 418, "code": "teapot_brewing"})
	mustStatus(t, r, 201)
	id := decode[struct {
		ID string `json:"id"`
	}](t, r).ID
	// the fault's code is known before it fired: an await may wait for it
	mustStatus(t, e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"code": "teapot_brewing"}, "timeout": "1ms"}), 408)
	mustStatus(t, e.get("/v1/projects", "t-read"), 418)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + id}), 200)
	// gone with the fault, but the journal holds an entry with it
	got := decode[struct {
		Requests []struct {
			ErrorCode string `json:"error_code"`
		} `json:"requests"`
	}](t, e.get("/_emulator/requests?code=teapot_brewing", ""))
	if len(got.Requests) != 1 || got.Requests[0].ErrorCode != "teapot_brewing" {
		t.Fatalf("requests with the removed fault's code: %+v", got.Requests)
	}
	r = e.get("/_emulator/requests?code=teapot_brewin", "")
	mustEnvelope(t, r, 400, "invalid_request")
	if msg := r.Err(t).Message; !strings.Contains(msg, `did you mean "teapot_brewing"?`) {
		t.Errorf("message %q names no close code", msg)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
	mustEnvelope(t, e.get("/_emulator/requests?code=teapot_brewing", ""), 400, "invalid_request")
}
