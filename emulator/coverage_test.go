package emulator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// covIndex reads a coverage answer as counts by "METHOD path status code" (an operation
// alone by "METHOD path"), transitions by "resource from>to via", faults by action.
type covIndex struct {
	ops, resp, trans, faults map[string]int64
	undocumented             map[string]bool
	c                        emulator.Coverage
}

func (e *env) coverage(t testing.TB, path string) covIndex {
	t.Helper()
	r := e.get(path, "")
	mustStatus(t, r, 200)
	c := decode[emulator.Coverage](t, r)
	x := covIndex{ops: map[string]int64{}, resp: map[string]int64{}, trans: map[string]int64{}, faults: map[string]int64{}, undocumented: map[string]bool{}, c: c}
	for _, o := range c.Operations {
		k := o.Method + " " + o.Path
		if _, dup := x.ops[k]; dup {
			t.Fatalf("operation %s listed twice", k)
		}
		x.ops[k] = o.Seen
		for _, rr := range o.Responses {
			rk := fmt.Sprintf("%s %d %s", k, rr.Status, orNull(rr.Code))
			x.resp[rk] = rr.Seen
			x.undocumented[rk] = rr.Undocumented
		}
	}
	for _, tr := range c.Transitions {
		x.trans[tr.Resource+" "+tr.From+">"+tr.To+" "+tr.Via] = tr.Seen
	}
	for _, f := range c.Faults {
		x.faults[f.Action] = f.Seen
	}
	return x
}

func (x covIndex) want(t testing.TB, m map[string]int64, what string, want map[string]int64) {
	t.Helper()
	for k, n := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s %q is not listed", what, k)
			continue
		}
		if got != n {
			t.Errorf("%s %q seen %d, want %d", what, k, got, n)
		}
	}
}

// A scripted workflow produces each answer on purpose, and coverage counts exactly
// those: every other documented answer is listed with 0.
func TestCoverageCountsAScriptedWorkflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.coverage(t, "/_emulator/coverage")
	if before.c.Totals.Operations.Seen != 0 || before.c.Totals.Responses.Seen != 0 || before.c.Totals.Percent != 0 {
		t.Fatalf("a fresh world has coverage: %+v", before.c.Totals)
	}
	if before.c.Totals.Operations.Total != 12 || len(before.c.Transitions) != 13 || len(before.c.Faults) != 16 {
		t.Fatalf("denominator: %d operations, %d transitions, %d fault actions", before.c.Totals.Operations.Total, len(before.c.Transitions), len(before.c.Faults))
	}

	mustStatus(t, e.get("/v1/projects", ""), 401)                                        // missing_token
	mustStatus(t, e.get("/v1/projects", "nope"), 401)                                    // invalid_token
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)                                  //
	mustStatus(t, e.do(req{Method: "HEAD", Path: "/v1/projects", Token: "t-read"}), 200) // HEAD counts as GET
	mustStatus(t, e.get("/v1/deployments/dpl_nope", "t-read"), 404)                      // deployment_not_found
	mustStatus(t, e.post("/v1/deployments", "t-read", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 403)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": sha}})
	mustStatus(t, r, 201)
	id := decode[emulator.DeploymentCreated](t, r).ID
	mustStatus(t, e.post("/v1/deployments/"+id+"/promote", "t-deploy", nil), 409)     // deployment_not_ready
	e.advance("1m")                                                                   // queued → building → ready
	mustStatus(t, e.post("/v1/deployments/"+id+"/promote", "t-deploy", nil), 200)     // newer than dpl_first: a promote
	mustStatus(t, e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil), 200) // older than id: a roll back
	mustStatus(t, e.post("/v1/deployments/dpl_broken/promote", "t-deploy", nil), 409)
	// a fault: counted by action, its answer by status and code
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503, "times": 1}), 201)
	mustStatus(t, e.get("/v1/projects", "t-read"), 503)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/deployments/*"}, "status": 418, "code": "teapot", "message": "short and stout", "times": 1}), 201)
	mustStatus(t, e.get("/v1/deployments/"+id, "t-read"), 418)
	// a domain: pending → verifying → active, its certificate issued
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "cov.example.test"}), 201)
	e.advance("1m")
	// not an operation: a path with no route is not counted
	mustStatus(t, e.get("/v1/nothing", "t-read"), 404)
	// the control API is not the emulated service: not counted
	mustStatus(t, e.get("/_emulator/requests", ""), 200)

	x := e.coverage(t, "/_emulator/coverage")
	x.want(t, x.ops, "operation", map[string]int64{
		"GET /v1/projects":                                    5,
		"GET /v1/deployments/{id}":                            2,
		"POST /v1/deployments":                                2,
		"POST /v1/deployments/{id}/promote":                   4,
		"POST /v1/projects/{project_id}/domains":              1,
		"POST /v1/files":                                      0,
		"POST /v1/decrypt":                                    0,
		"DELETE /v1/projects/{project_id}/domains/{hostname}": 0,
	})
	x.want(t, x.resp, "answer", map[string]int64{
		"GET /v1/projects 200 null":                                  2,
		"GET /v1/projects 401 missing_token":                         1,
		"GET /v1/projects 401 invalid_token":                         1,
		"GET /v1/projects 503 service_unavailable":                   1,
		"GET /v1/projects 429 rate_limited":                          0,
		"GET /v1/deployments/{id} 404 deployment_not_found":          1,
		"GET /v1/deployments/{id} 418 teapot":                        1,
		"POST /v1/deployments 201 null":                              1,
		"POST /v1/deployments 403 insufficient_scope":                1,
		"POST /v1/deployments 400 missing_files":                     0,
		"POST /v1/deployments/{id}/promote 200 null":                 2,
		"POST /v1/deployments/{id}/promote 409 deployment_not_ready": 2,
		"POST /v1/projects/{project_id}/domains 201 null":            1,
		"POST /v1/files 201 null":                                    0,
	})
	if !x.undocumented["GET /v1/deployments/{id} 418 teapot"] || x.undocumented["GET /v1/projects 200 null"] {
		t.Error("an injected fault's undocumented answer is not marked undocumented, or a documented one is")
	}
	x.want(t, x.trans, "transition", map[string]int64{
		"deployment queued>building ":          1,
		"deployment building>ready ":           1,
		"deployment building>error ":           0,
		"deployment ready>production promote":  1,
		"deployment ready>production rollback": 1,
		"domain pending>verifying ":            1,
		"domain verifying>active ":             1,
		"domain verifying>error ":              0,
		"certificate pending>issued issue":     1,
		"certificate issued>issued renewal":    0,
	})
	x.want(t, x.faults, "fault", map[string]int64{"status": 2, "rate_limit": 0, "drop": 0, "delay": 0, "timeout": 0})

	tot := x.c.Totals
	if tot.Operations.Seen != 5 || tot.Operations.Total != 12 || tot.Operations.Percent != 41.6 {
		t.Errorf("operations total %+v, want 5 of 12, 41.6%%", tot.Operations)
	}
	if tot.Transitions.Seen != 7 || tot.Transitions.Percent != 53.8 {
		t.Errorf("transitions total %+v, want 7 of 13, 53.8%%", tot.Transitions)
	}
	if tot.Responses.Seen != 10 {
		t.Errorf("responses seen %d, want 10 (the undocumented 418 is not counted)", tot.Responses.Seen)
	}
	all := tot.Operations.Total + tot.Responses.Total + tot.Transitions.Total
	if want := float64(int(float64(5+10+7)*1000/float64(all))) / 10; tot.Percent != want {
		t.Errorf("percent %v, want %v", tot.Percent, want)
	}

	// DELETE starts afresh; resets of the world do not
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	if x := e.coverage(t, "/_emulator/coverage"); x.c.Totals.Operations.Seen != 5 {
		t.Errorf("a world reset cleared coverage: %+v", x.c.Totals)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/coverage"}), 200)
	if x := e.coverage(t, "/_emulator/coverage"); x.c.Totals.Operations.Seen != 0 || x.c.Totals.Transitions.Seen != 0 || x.faults["status"] != 0 || len(x.undocumented) != len(before.undocumented) {
		t.Errorf("DELETE /_emulator/coverage left counts: %+v", x.c.Totals)
	}
}

// Each namespace counts its own requests; ?namespaces=all adds every namespace up,
// deleted ones included.
func TestCoverageByNamespaceAndTheirUnion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.newNamespace(t, nil), e.newNamespace(t, nil)
	mustStatus(t, e.get("/v1/projects", a.Tokens.Read), 200)
	mustStatus(t, e.get("/v1/projects", a.Tokens.Read), 200)
	mustStatus(t, e.get("/v1/deployments/dpl_nope", b.Tokens.Read), 404)
	mustStatus(t, e.get("/v1/deployments", "t-read"), 200)

	if x := e.coverage(t, "/_emulator/coverage"); x.ops["GET /v1/projects"] != 0 || x.ops["GET /v1/deployments"] != 1 {
		t.Errorf("the default world counts another's requests: %v", x.ops)
	}
	if x := e.coverage(t, a.control("/coverage")); x.ops["GET /v1/projects"] != 2 || x.ops["GET /v1/deployments"] != 0 {
		t.Errorf("namespace a: %v", x.ops)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + b.Namespace}), 200)
	x := e.coverage(t, "/_emulator/coverage?namespaces=all")
	x.want(t, x.resp, "union answer", map[string]int64{
		"GET /v1/projects 200 null":                         2,
		"GET /v1/deployments 200 null":                      1,
		"GET /v1/deployments/{id} 404 deployment_not_found": 1, // b's, deleted
	})
	// DELETE ?namespaces=all clears them all, deleted ones included
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/coverage?namespaces=all"}), 200)
	if x := e.coverage(t, "/_emulator/coverage?namespaces=all"); x.c.Totals.Operations.Seen != 0 {
		t.Errorf("after DELETE ?namespaces=all: %+v", x.c.Totals)
	}
}

func TestCoverageRefusesBadQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.newNamespace(t, nil)
	for _, tc := range []struct {
		method, path, want string
	}{
		{"GET", "/_emulator/coverage?namespaces=al", `did you mean "all"`},
		{"GET", "/_emulator/coverage?namespace=all", `did you mean "namespaces"`},
		{"GET", "/_emulator/coverage?namespaces=all&namespaces=all", `query parameter "namespaces" is given 2 times: it takes one value`},
		{"DELETE", "/_emulator/coverage?namespaces=none", `the only value is "all"`},
		{"GET", n.control("/coverage?namespaces=all"), "not by a namespace's coverage"},
		{"GET", "/_emulator/coverage?ignore=internal_eror", `did you mean "internal_error"?`},
		// a code in another case is still the code the user meant, as the journal's ?code= takes any case
		{"GET", "/_emulator/coverage?ignore=INTERNAL_ERROR", `did you mean "internal_error"?`},
		{"GET", "/_emulator/coverage?ignore=Rate_Limitd", `did you mean "rate_limited"?`},
		{"DELETE", "/_emulator/coverage?ignore=internal_error", "not by DELETE"},
	} {
		r := e.do(req{Method: tc.method, Path: tc.path})
		if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", tc.method, tc.path, r.Status, r.Body, tc.want)
		}
	}
	if r := e.get("/_emulator/namespaces/ns_gone/coverage", ""); r.Status != 404 || r.Code() != "namespace_not_found" {
		t.Errorf("unknown namespace: %d %s", r.Status, r.Body)
	}
}

// A promote is counted as one when the promoted deployment is newer than the production
// one it replaces, and as a rollback when it is older; in the default world and in a
// namespace alike. (The fixtures' production is dpl_first; dpl_second is a day newer.)
func TestCoverageTellsAPromoteFromARollback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.newNamespace(t, nil)
	worlds := []struct{ name, token, coverage string }{
		{"default world", "t-deploy", "/_emulator/coverage"},
		{"namespace", n.Tokens.Deploy, n.control("/coverage")},
	}
	steps := []struct{ promote, via string }{
		{"dpl_second", "promote"}, // newer than dpl_first
		{"dpl_first", "rollback"}, // older than dpl_second
		{"dpl_second", "promote"}, // newer again
		{"dpl_second", "promote"}, // already production: no older one replaced
	}
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			want := map[string]int64{"promote": 0, "rollback": 0}
			for i, s := range steps {
				mustStatus(t, e.post("/v1/deployments/"+s.promote+"/promote", w.token, nil), 200)
				want[s.via]++
				x := e.coverage(t, w.coverage)
				for via, n := range want {
					if got := x.trans["deployment ready>production "+via]; got != n {
						t.Errorf("step %d (promote %s): %s seen %d, want %d", i+1, s.promote, via, got, n)
					}
				}
			}
		})
	}
}

// ?ignore= leaves rows out of the totals as hostemu coverage --ignore does, for the
// testkits that read coverage over HTTP (#33).
func TestCoverageIgnoresRowsAsked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.newNamespace(t, nil)
	all := e.coverage(t, n.control("/coverage")).c
	x := e.coverage(t, n.control("/coverage?ignore=internal_error,POST%20/v1/files&ignore=deployment%20building%20-%3E%20error"))
	files := 0
	for _, o := range all.Operations {
		if o.Method == "POST" && o.Path == "/v1/files" {
			files = len(o.Responses)
		}
	}
	ops := len(all.Operations)
	got := x.c.Totals
	// every operation's 500 but POST /v1/files's (ignored whole) is one more row
	if got.Operations.Total != ops-1 || got.Responses.Total != all.Totals.Responses.Total-files-(ops-1) || got.Transitions.Total != all.Totals.Transitions.Total-1 {
		t.Fatalf("totals %+v, want 1 operation, %d answers and 1 edge fewer than %+v", got, files+ops-1, all.Totals)
	}
	for _, o := range x.c.Operations {
		if o.Method == "POST" && o.Path == "/v1/files" && o.Ignored != "?ignore=" {
			t.Errorf("POST /v1/files: ignored %q, want \"?ignore=\"", o.Ignored)
		}
	}
}
