package emulator_test

import (
	"strconv"
	"strings"
	"testing"
)

// An escaped slash (%2F) inside a path segment is part of that segment: an id holding
// one names no deployment, domain, token or project, and never a route further down the
// path. It used to be decoded before routing, so POST /v1/deployments/dpl_x%2Fpromote
// promoted dpl_x and DELETE …/prj_shop%2Fdomains%2Fshop.test deleted the domain.
func TestEscapedSlashStaysInTheID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		// the item routes: the id with its slash is not found
		{"GET", "/v1/deployments/dpl_first%2Flogs", 404, "deployment_not_found"},
		{"GET", "/v1/deployments/dpl_first%2flogs", 404, "deployment_not_found"},
		{"GET", "/v1/deployments/dpl_first%2F", 404, "deployment_not_found"},
		{"GET", "/v1/deployments/dpl_first%2Flogs/logs", 404, "deployment_not_found"},
		{"GET", "/v1/projects/prj_shop%2Fx/domains", 404, "project_not_found"},
		{"DELETE", "/v1/projects/prj_shop/domains/www.shop.test%2Fx", 404, "domain_not_found"},
		{"DELETE", "/_emulator/tokens/t-read%2Fx", 404, "token_not_found"},
		{"GET", "/_emulator/deployments/dpl_first%2Flogs/logs", 404, "deployment_not_found"},
		{"GET", "/_emulator/namespaces/ns_x%2Fclock/clock", 404, "namespace_not_found"},
		// a path that decodes to another route: that route is not taken
		{"POST", "/v1/deployments/dpl_second%2Fpromote", 405, "method_not_allowed"},
		{"POST", "/v1/projects/prj_shop%2Fdomains", 404, "not_found"},
		{"DELETE", "/v1/projects/prj_shop%2Fdomains%2Fwww.shop.test", 404, "not_found"},
		{"POST", "/_emulator/deployments/dpl_second%2Fpromote", 404, "not_found"},
		{"POST", "/_emulator/deployments/dpl_first%2Fstatus", 404, "not_found"},
		{"POST", "/_emulator/domains/shop.test%2Fstatus", 404, "not_found"},
		{"DELETE", "/_emulator/faults%2Fflt_x", 404, "not_found"},
	} {
		var body any
		if tc.method == "POST" {
			body = map[string]any{"status": "error", "hostname": "new.shop.test"}
		}
		r := e.do(req{Method: tc.method, Path: tc.path, Token: "t-admin", Body: body})
		if r.Status != tc.status || r.Code() != tc.code {
			t.Errorf("%s %s: %d %s, want %d %s: %s", tc.method, tc.path, r.Status, r.Code(), tc.status, tc.code, r.Body)
			continue
		}
		if msg := r.Err(t).Message; tc.code == "not_found" || tc.code == "method_not_allowed" {
			if !strings.Contains(msg, tc.path) { // the path as sent, not decoded into another route's
				t.Errorf("%s %s: message %q does not name the path as sent", tc.method, tc.path, msg)
			}
		}
	}
	// nothing above changed the world: no promote, no forced status, no domain gone
	st := string(e.get("/_emulator/state", "").Body)
	for _, want := range []string{`"production_deployment_id":"dpl_first"`, `"www.shop.test"`} {
		if !strings.Contains(st, want) {
			t.Errorf("the state lost %s: %.400s", want, st)
		}
	}
	if strings.Contains(st, "new.shop.test") {
		t.Error("a domain was added through an escaped slash")
	}
	if r := e.get("/v1/deployments/dpl_first", "t-read"); !strings.Contains(string(r.Body), `"status":"ready"`) {
		t.Errorf("dpl_first was forced: %s", r.Body)
	}
	if r := e.get("/v1/projects/prj_shop/domains", "t-read"); strings.Contains(string(r.Body), `"status":"error"`) {
		t.Errorf("a domain was forced: %s", r.Body)
	}
}

// Faults, the journal and coverage read a path's segments as the router does: a fault
// on the promote route does not fire for POST /v1/deployments/dpl_x%2Fpromote (the
// deployment item, 405), nor is the request the promote operation, and the journal
// keeps the escaped slash, so that ?path=/v1/deployments/*/promote finds no promote.
func TestEscapedSlashIsOneSegmentForFaultsAndTheJournal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, m := range []map[string]any{
		{"path": "/v1/deployments/*/promote"},
		{"operation": "promoteDeployment"},
	} {
		mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": m, "status": 503}), 201)
	}
	r := e.do(req{Method: "POST", Path: "/v1/deployments/dpl_second%2Fpromote", Token: "t-admin"})
	if r.Status != 405 || r.Code() != "method_not_allowed" {
		t.Fatalf("a fault on the promote route answered an item's request: %d %s", r.Status, r.Body)
	}
	if j := e.get("/_emulator/requests?path=/v1/deployments/*/promote", ""); !strings.Contains(string(j.Body), `"requests":[]`) {
		t.Errorf("the journal holds a promote: %s", j.Body)
	}
	if j := e.get("/_emulator/requests?path=/v1/deployments/dpl_second%252Fpromote", ""); !strings.Contains(string(j.Body), `"path":"/v1/deployments/dpl_second%2Fpromote"`) {
		t.Errorf("the journal does not keep the escaped slash: %s", j.Body)
	}
	// other escapes are decoded as ever: the fault and the journal see dpl_second
	r = e.do(req{Method: "POST", Path: "/v1/deployments/dpl%5Fsecond/promote", Token: "t-admin"})
	if r.Status != 503 {
		t.Errorf("POST …/dpl%%5Fsecond/promote: %d %s, want the fault's 503", r.Status, r.Body)
	}
	if j := e.get("/_emulator/requests?path=/v1/deployments/dpl_second/promote", ""); !strings.Contains(string(j.Body), `"status":503`) {
		t.Errorf("the journal does not decode %%5F: %s", j.Body)
	}
}

// A parameter of a path sent with escapes is unescaped as the path is (url.PathUnescape),
// not as a query value: a '+' stays a '+', as it does in a path sent without escapes.
func TestPlusInAnEscapedPathStaysAPlus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for path, id := range map[string]string{
		"/v1/deployments/dpl+x":        "dpl+x",
		"/v1/deployments/dpl+x%41":     "dpl+xA",
		"/v1/deployments/dpl+x%2Fy":    "dpl+x/y",
		"/v1/deployments/dpl%2Bx%2520": "dpl+x%20",
	} {
		r := e.get(path, "t-read")
		if r.Status != 404 || r.Code() != "deployment_not_found" || !strings.Contains(r.Err(t).Message, strconv.Quote(id)) {
			t.Errorf("GET %s: %d %s, want 404 naming %q", path, r.Status, r.Body, id)
		}
	}
}

// %252F is a percent sign and "2F" inside an id, %2F an escaped slash: two ids the
// router tells apart, which the journal (and faults, which read the same path) keeps
// apart too: a percent sign inside a segment reads %25 there, as a slash reads %2F.
func TestJournalKeepsAnEscapedPercentApartFromAnEscapedSlash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	paths := map[string]string{ // as sent → the journal's path
		"/v1/deployments/dpl_x%2Fy":    "/v1/deployments/dpl_x%2Fy",
		"/v1/deployments/dpl_x%252Fy":  "/v1/deployments/dpl_x%252Fy",
		"/v1/deployments/dpl_x%25%2Fy": "/v1/deployments/dpl_x%25%2Fy",
		"/v1/deployments/100%25":       "/v1/deployments/100%25",
		"/v1/deployments/dpl%5Fx":      "/v1/deployments/dpl_x",
	}
	for sent := range paths {
		mustStatus(t, e.get(sent, "t-read"), 404)
	}
	got := map[string]int{}
	for _, r := range decode[journalPage](t, e.get("/_emulator/requests?path=/v1/deployments/*", "")).Requests {
		got[r.Path]++
	}
	for sent, want := range paths {
		if got[want] != 1 {
			t.Errorf("GET %s: the journal holds %v, want one %s", sent, got, want)
		}
	}
	// a query names the path as the journal writes it (a query's own escapes decoded)
	r := decode[journalPage](t, e.get("/_emulator/requests?path=/v1/deployments/dpl_x%25252Fy", ""))
	if len(r.Requests) != 1 || r.Requests[0].Path != "/v1/deployments/dpl_x%252Fy" {
		t.Errorf("?path=…dpl_x%%25252Fy: %+v", r.Requests)
	}
}

// A 404 or 405 names the path as it was sent, a '+' included, also when the path holds
// an escape (the router reads such a path with each '+' as %2B: the message does not).
func TestNotFoundNamesThePathAsSentWithAPlus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/nope+x%41", 404},
		{"GET", "/v1/nope%2Bx+y%2Fz", 404},
		{"POST", "/v1/deployments/dpl+x%2Fpromote", 405},
		{"GET", "/v1/nope+x", 404},
		// after a '+' (the exchanges are pooled): no stale path as sent
		{"GET", "/v1/nope%41y", 404},
		{"GET", "/v1/nope", 404},
	} {
		r := e.do(req{Method: tc.method, Path: tc.path, Token: "t-admin"})
		if r.Status != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, r.Status, r.Body, tc.status)
			continue
		}
		if msg := r.Err(t).Message; !strings.Contains(msg, " "+tc.path) {
			t.Errorf("%s %s: message %q does not name the path as sent", tc.method, tc.path, msg)
		}
	}
}
