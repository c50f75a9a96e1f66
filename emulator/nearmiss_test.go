package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// Near misses (issue 34, item 3): a fault that never fired, an await that timed out and
// a journal query that found nothing say what almost matched, field by field.

// nearMiss is one near miss as the control API writes it.
type nearMiss struct {
	Seq     uint64          `json:"seq"`
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Differs json.RawMessage `json:"differs"`
}

// listedFault is a fault of GET /_emulator/faults with its near misses.
type listedFault struct {
	ID         string      `json:"id"`
	Hits       int64       `json:"hits"`
	NearMisses *[]nearMiss `json:"near_misses"`
}

// faultNearMisses is the near misses GET path (/_emulator/faults, or a namespace's)
// gives the only fault it lists.
func (e *env) faultNearMisses(t *testing.T, path string) []nearMiss {
	t.Helper()
	r := e.get(path, "")
	mustStatus(t, r, 200)
	list := decode[struct{ Faults []listedFault }](t, r)
	if len(list.Faults) != 1 {
		t.Fatalf("want one fault: %s", r.Body)
	}
	f := list.Faults[0]
	if f.NearMisses == nil {
		t.Fatalf("a fault with %d hits has no near_misses: %s", f.Hits, r.Body)
	}
	return *f.NearMisses
}

func (e *env) reset(t *testing.T) {
	t.Helper()
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
}

// The issue's item 3, as a user met it: a fault on a path the client never calls, a
// journal query and an await for a misspelt path. Each now says what almost matched.
func TestNearMissesOfTheIssue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// the edge's paths are not routes: a fault there is accepted whatever its path
	e.addFault(t, map[string]any{"match": map[string]any{"host": "shop.test", "path": "/pricing/"}, "status": 503})
	e.edgeGet("shop.test", "/pricing", nil)
	nms := e.faultNearMisses(t, "/_emulator/faults")
	if len(nms) != 1 || nms[0].Path != "/pricing" || nms[0].Method != "GET" || string(nms[0].Differs) != `{"path":"/pricing"}` {
		t.Fatalf("near misses of the edge fault: %+v", nms)
	}

	mustStatus(t, e.post("/v1/deployments", "t-deploy", createBody("preview")), 201)
	// a journal query for /v1/deployment finds nothing, and says why
	r := e.get("/_emulator/requests?path=/v1/deployment", "")
	mustStatus(t, r, 200)
	got := decode[struct {
		Requests   []json.RawMessage
		NearMisses []nearMiss `json:"near_misses"`
	}](t, r)
	if len(got.Requests) != 0 || len(got.NearMisses) != 2 || got.NearMisses[0].Path != "/v1/deployments" ||
		got.NearMisses[0].Method != "POST" || string(got.NearMisses[0].Differs) != `{"path":"/v1/deployments"}` {
		t.Fatalf("journal query: %s", r.Body)
	}
	if nm := got.NearMisses[1]; nm.Path != "/pricing" || string(nm.Differs) != `{"path":"/pricing"}` {
		t.Errorf("the farther near miss: %+v", nm)
	}
	// a query that selects something has no near misses
	if r := e.get("/_emulator/requests?path=/v1/deployments", ""); strings.Contains(string(r.Body), "near_misses") {
		t.Errorf("a query with answers carries near misses: %s", r.Body)
	}
	// nor one with no condition on an empty range
	if r := e.get("/_emulator/requests?since=1000", ""); strings.Contains(string(r.Body), "near_misses") {
		t.Errorf("a query with no condition carries near misses: %s", r.Body)
	}

	// an await for it times out, with the same near misses, in the envelope and the message
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"method": "POST", "path": "/v1/deployment"}, "timeout": "1ms"})
	mustStatus(t, r, 408)
	env := decode[struct {
		Error struct {
			Code       string
			Message    string
			NearMisses []nearMiss `json:"near_misses"`
		}
	}](t, r)
	if env.Error.Code != "await_timeout" || len(env.Error.NearMisses) != 1 || string(env.Error.NearMisses[0].Differs) != `{"path":"/v1/deployments"}` {
		t.Fatalf("await: %s", r.Body)
	}
	if want := `near misses: seq 2 POST /v1/deployments differs in {"path":"/v1/deployments"}`; !strings.Contains(env.Error.Message, want) {
		t.Errorf("await message %q lacks %q", env.Error.Message, want)
	}
	// nothing close: the message says so, and near_misses is empty
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"method": "DELETE", "service": "cipher", "path": "/v1/nothing"}, "timeout": "1ms"})
	mustStatus(t, r, 408)
	if !strings.Contains(string(r.Body), `"near_misses":[]`) || !strings.Contains(string(r.Body), "no near misses among the newest 200 requests") {
		t.Errorf("await with nothing close: %s", r.Body)
	}
	// an await of another kind carries none
	r = e.post("/_emulator/await", "", map[string]any{"deployment": "dpl_broken", "status": "ready", "timeout": "1s"})
	mustStatus(t, r, 408)
	if strings.Contains(string(r.Body), "near_misses") {
		t.Errorf("a deployment await carries near misses: %s", r.Body)
	}
}

// A test per field of a fault's match: the request that almost matched, and what it had
// in the field that differed.
func TestFaultNearMissPerField(t *testing.T) {
	t.Parallel()
	faultNearMissPerField(t, newEnv(t))
}

// The same through hostemu's own listener, whose requests' header maps the journal
// keeps, their credentials redacted in place, to make the entries' headers when read:
// the token's near miss is the token's, taken before.
func TestFaultNearMissPerFieldServed(t *testing.T) {
	t.Parallel()
	_, e := listenEnv(t, emulator.Limits{})
	faultNearMissPerField(t, e)
}

func faultNearMissPerField(t *testing.T, e *env) {
	get := func(path, token string, headers map[string]string) req {
		return req{Method: "GET", Path: path, Token: token, Headers: headers}
	}
	for _, tt := range []struct {
		field   string
		match   map[string]any
		request req
		differs string
	}{
		{"method", map[string]any{"method": "DELETE", "path": "/v1/projects"}, get("/v1/projects", "t-read", nil), `{"method":"GET"}`},
		{"path", map[string]any{"method": "GET", "path": "/v1/deployments/dpl_second"}, get("/v1/deployments/dpl_first", "t-read", nil),
			`{"path":"/v1/deployments/dpl_first"}`},
		{"service", map[string]any{"service": "edge", "method": "GET"}, get("/v1/projects", "t-read", nil), `{"service":"hosting"}`},
		{"scope", map[string]any{"path": "/v1/projects", "scope": "admin"}, get("/v1/projects", "t-read", nil), `{"scope":"read"}`},
		{"scope, none", map[string]any{"path": "/v1/projects", "scope": "admin"}, get("/v1/projects", "", nil), `{"scope":""}`},
		{"host", map[string]any{"host": "blog.test", "path": "/"}, req{Method: "GET", Path: "/", Host: "shop.test"}, `{"host":"shop.test"}`},
		{"operation", map[string]any{"operation": "listDeployments"}, get("/v1/projects", "t-read", nil), `{"operation":"listProjects"}`},
		{"operation, none", map[string]any{"operation": "listDeployments"}, get("/v1/nowhere", "t-read", nil), `{"operation":""}`},
		{"query", map[string]any{"path": "/v1/deployments", "query": map[string]string{"target": "production", "limit": "*"}},
			get("/v1/deployments?project_id=prj_shop&target=preview", "t-read", nil), `{"query":{"limit":null,"target":"preview"}}`},
		{"headers", map[string]any{"path": "/v1/projects", "headers": map[string]string{"x-test-run": "run-1", "X-Other": "*"}},
			get("/v1/projects", "t-read", map[string]string{"X-Test-Run": "run-2"}), `{"headers":{"X-Other":null,"x-test-run":"run-2"}}`},
		{"headers, a credential", map[string]any{"path": "/v1/projects", "headers": map[string]string{"Authorization": "Bearer t-admin"}},
			get("/v1/projects", "t-read", nil), `{"headers":{"Authorization":"[redacted]"}}`},
		{"body", map[string]any{"operation": "createDeployment", "body": map[string]any{"target": "production", "meta.branch": "main", "project_id": "prj_shop"}},
			req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "target": "preview", "meta": map[string]any{"pr": 7}}},
			`{"body":{"meta.branch":null,"target":"preview"}}`},
		{"body, not JSON", map[string]any{"path": "/v1/deployments", "method": "POST", "body": map[string]any{"target": "production"}},
			req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: "target=production"}, `{"body":{"target":null}}`},
		{"token", map[string]any{"path": "/v1/projects", "token": "t-admin"}, get("/v1/projects", "t-read", nil), `{"token":"[redacted]"}`},
		{"token, none", map[string]any{"path": "/v1/projects", "token": "t-admin"}, get("/v1/projects", "", nil), `{"token":""}`},
		{"two fields", map[string]any{"method": "DELETE", "path": "/v1/deployments/dpl_second", "scope": "read"}, get("/v1/deployments/dpl_first", "t-read", nil),
			`{"method":"GET","path":"/v1/deployments/dpl_first"}`},
	} {
		t.Run(tt.field, func(t *testing.T) {
			e.reset(t)
			e.addFault(t, map[string]any{"match": tt.match, "status": 503})
			if r := e.do(tt.request); r.Status == 503 {
				t.Fatalf("the fault fired: %s", r.Body)
			}
			nms := e.faultNearMisses(t, "/_emulator/faults")
			if len(nms) != 1 {
				t.Fatalf("near misses: %+v, want one", nms)
			}
			if nm := nms[0]; string(nm.Differs) != tt.differs || nm.Method != tt.request.Method || nm.Seq != 1 {
				t.Errorf("near miss %d %s %s differs %s, want 1 %s %s differs %s", nm.Seq, nm.Method, nm.Path, nm.Differs, tt.request.Method, tt.request.Path, tt.differs)
			}
			// no token is ever written
			if r := e.get("/_emulator/faults", ""); strings.Contains(strings.ReplaceAll(string(r.Body), `"token":"t-admin"`, ""), "t-read") {
				t.Errorf("a listing shows the request's token: %s", r.Body)
			}
		})
	}
}

// What is no near miss: a request that differs in three fields, or in every field of a
// two-field match; and a fault with hits gets no near_misses at all.
func TestFaultNearMissBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addFault(t, map[string]any{"match": map[string]any{"method": "DELETE", "path": "/v1/deployments/dpl_x", "scope": "admin"}, "status": 503})
	e.addFault(t, map[string]any{"match": map[string]any{"method": "DELETE", "path": "/v1/deployments/dpl_x"}, "status": 503})
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	r := e.get("/_emulator/faults", "")
	if got := decode[struct{ Faults []listedFault }](t, r); len(got.Faults) != 2 || got.Faults[0].NearMisses == nil || len(*got.Faults[0].NearMisses) != 0 ||
		got.Faults[1].NearMisses == nil || len(*got.Faults[1].NearMisses) != 0 {
		t.Fatalf("near misses of requests that differ in three fields, or in all: %s", r.Body)
	}
	if !strings.Contains(string(r.Body), `"near_misses":[]`) {
		t.Errorf("a fault with no hits and nothing close lacks near_misses []: %s", r.Body)
	}

	e.reset(t)
	e.addFault(t, map[string]any{"match": map[string]any{"path": "/v1/projects", "method": "GET"}, "status": 503, "times": 1})
	mustStatus(t, e.get("/v1/projects", "t-read"), 503)
	mustStatus(t, e.get("/v1/deployments?project_id=prj_shop", "t-read"), 200)
	if r := e.get("/_emulator/faults", ""); strings.Contains(string(r.Body), "near_misses") {
		t.Errorf("a fault with hits has near misses: %s", r.Body)
	}
	// the answer to POST carries none either
	if r := e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/files"}, "status": 503}); strings.Contains(string(r.Body), "near_misses") {
		t.Errorf("POST /_emulator/faults answers near misses: %s", r.Body)
	}
}

// Closest first: fewer fields differing, then the nearer path, then the most recent;
// at most 5; only the newest 200 requests are looked at.
func TestNearMissOrderAndBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addFault(t, map[string]any{"match": map[string]any{"method": "POST", "path": "/v1/deployments/dpl_first/promote", "service": "hosting"}, "status": 503})
	mustStatus(t, e.get("/v1/deployments/dpl_first", "t-read"), 200)                       // 1: method and path (near)
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)                                    // 2: method and path (far)
	e.do(req{Method: "POST", Path: "/v1/deployments/dpl_second/promote", Token: "t-read"}) // 3: path, near
	e.do(req{Method: "POST", Path: "/v1/files", Token: "t-read"})                          // 4: path, far
	e.do(req{Method: "POST", Path: "/v1/deployments/dpl_broken/promote", Token: "t-read"}) // 5: path, as near as 3
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)                                    // 6: as 2
	var seqs []uint64
	for _, nm := range e.faultNearMisses(t, "/_emulator/faults") {
		seqs = append(seqs, nm.Seq)
	}
	if want := []uint64{5, 3, 4, 1, 6}; fmt.Sprint(seqs) != fmt.Sprint(want) {
		t.Errorf("near misses in the order %v, want %v", seqs, want)
	}

	// only the newest 200 entries: 201 requests later, the near ones are out of sight
	for range 201 {
		mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	}
	for _, nm := range e.faultNearMisses(t, "/_emulator/faults") {
		if nm.Seq <= 6 {
			t.Errorf("near miss %d is older than the newest 200 requests", nm.Seq)
		}
	}
}

// A journal query's and an await's near misses, a test per condition.
func TestJournalNearMissPerField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: createBody("preview"), Headers: map[string]string{"X-Test-Run": "run-2"}}), 201)
	for _, tt := range []struct {
		field, query, differs string
	}{
		{"method", "method=PUT&path=/v1/deployments", `{"method":"POST"}`},
		{"path", "method=POST&path=/v1/deployment", `{"path":"/v1/deployments"}`},
		{"status", "path=/v1/deployments&status=200", `{"status":201}`},
		{"service", "path=/v1/deployments&service=cipher", `{"service":"hosting"}`},
		{"scope", "path=/v1/deployments&scope=admin", `{"scope":"deploy"}`},
		{"code", "path=/v1/deployments&code=rate_limited", `{"code":""}`},
		{"body", "path=/v1/deployments&body=target=production", `{"body":{"target":"preview"}}`},
		{"body, absent", "path=/v1/deployments&body=meta.branch", `{"body":{"meta.branch":null}}`},
		{"header", "path=/v1/deployments&header=X-Test-Run:run-1", `{"header":{"X-Test-Run":"run-2"}}`},
		{"header, absent", "path=/v1/deployments&header=X-Nope", `{"header":{"X-Nope":null}}`},
		{"response_header", "path=/v1/deployments&response_header=Retry-After", `{"response_header":{"Retry-After":null}}`},
		{"one condition", "service=edge", `{"service":"hosting"}`},
	} {
		t.Run(tt.field, func(t *testing.T) {
			r := e.get("/_emulator/requests?"+tt.query, "")
			mustStatus(t, r, 200)
			got := decode[struct {
				Requests   []json.RawMessage
				NearMisses []nearMiss `json:"near_misses"`
			}](t, r)
			if len(got.Requests) != 0 || len(got.NearMisses) != 1 || string(got.NearMisses[0].Differs) != tt.differs {
				t.Fatalf("GET /_emulator/requests?%s: %s, want differs %s", tt.query, r.Body, tt.differs)
			}
			q, _ := url.ParseQuery(tt.query)
			cond := map[string]any{}
			for k := range q {
				if k == "status" {
					var n int
					fmt.Sscan(q.Get(k), &n)
					cond[k] = n
				} else {
					cond[k] = q.Get(k)
				}
			}
			r = e.post("/_emulator/await", "", map[string]any{"requests": cond, "timeout": "1ms"})
			mustStatus(t, r, 408)
			env := decode[struct {
				Error struct {
					NearMisses []nearMiss `json:"near_misses"`
				}
			}](t, r)
			if len(env.Error.NearMisses) != 1 || string(env.Error.NearMisses[0].Differs) != tt.differs {
				t.Errorf("await %v: %s, want differs %s", cond, r.Body, tt.differs)
			}
		})
	}
}

// In a namespace, near misses are of its own journal.
func TestNearMissesInANamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.newNamespace(t, nil)
	mustStatus(t, e.get("/v1/projects", "t-read"), 200) // the default world's
	mustStatus(t, e.post(ns.control("/faults"), "", map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/project"}, "status": 503}), 400)
	mustStatus(t, e.post(ns.control("/faults"), "", map[string]any{"match": map[string]any{"method": "DELETE", "path": "/v1/projects"}, "status": 503}), 201)
	if nms := e.faultNearMisses(t, ns.control("/faults")); len(nms) != 0 {
		t.Fatalf("the namespace's fault has near misses of the default world: %+v", nms)
	}
	mustStatus(t, e.get("/v1/projects", ns.Tokens.Read), 200)
	nms := e.faultNearMisses(t, ns.control("/faults"))
	if len(nms) != 1 || string(nms[0].Differs) != `{"method":"GET"}` {
		t.Fatalf("namespace near misses: %+v", nms)
	}
	r := e.get(ns.control("/requests?method=DELETE"), "")
	if !strings.Contains(string(r.Body), `"near_misses":[{"seq":1,"method":"GET","path":"/v1/projects","differs":{"method":"GET"}}]`) {
		t.Errorf("namespace journal query: %s", r.Body)
	}
}
