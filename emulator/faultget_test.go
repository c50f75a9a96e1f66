package emulator_test

import (
	"encoding/json"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// GET /_emulator/faults/{id} answers one fault as the listing shows it: its near
// misses while it has no hits, none once it fired; 404 fault_not_found for an id never
// added, removed, or gone with a reset; a namespace's fault only under its namespace.
// Before it, the only way to a fault's hits was the listing, which weighs the near
// misses of every fault with no hits (docs/control-api.md "Near misses").
func TestGetOneFault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withScenario("flaky"))
	ns := e.newNamespace(t, nil)
	other := e.newNamespace(t, nil)
	add := func(path string, spec map[string]any) string {
		t.Helper()
		r := e.post(path, "", spec)
		mustStatus(t, r, 201)
		return decode[listedFault](t, r).ID
	}
	// never fires (DELETE /v1/projects is no route's), but a GET /v1/projects almost matches it
	idle := add("/_emulator/faults", map[string]any{"match": map[string]any{"method": "DELETE", "path": "/v1/projects"}, "status": 503})
	fired := add("/_emulator/faults", map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/projects"}, "status": 503, "times": 1})
	removed := add("/_emulator/faults", map[string]any{"match": map[string]any{"path": "/nowhere", "service": "edge"}, "status": 500})
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults/" + removed}), 200)
	if r := e.get("/v1/projects", "t-read"); r.Status != 503 {
		t.Fatalf("the fault did not fire: %d", r.Status)
	}
	var inNs string // flt_4 of the namespace: the default world has no flt_4
	for range 4 {
		inNs = add(ns.control("/faults"), map[string]any{"match": map[string]any{"path": "/only-in-ns", "service": "edge"}, "status": 500})
	}

	// the listing's element, byte for byte, is what the single answer says
	listed := map[string]json.RawMessage{}
	for _, raw := range decode[struct{ Faults []json.RawMessage }](t, e.get("/_emulator/faults", "")).Faults {
		var f listedFault
		json.Unmarshal(raw, &f)
		listed[f.ID] = raw
	}
	scn := "scn_flaky_1"
	if listed[scn] == nil {
		t.Fatalf("the flaky scenario lists no %s: %v", scn, listed)
	}

	for _, tt := range []struct {
		name, path string
		status     int
		code       string
		near       int // -1: no near_misses key; else how many
		hits       int64
	}{
		{"no hits: near misses", "/_emulator/faults/" + idle, 200, "", 1, 0},
		{"hits: no near misses", "/_emulator/faults/" + fired, 200, "", -1, 1},
		{"a scenario's fault", "/_emulator/faults/" + scn, 200, "", -2, -1},
		{"never added", "/_emulator/faults/flt_99", 404, "fault_not_found", 0, 0},
		{"removed", "/_emulator/faults/" + removed, 404, "fault_not_found", 0, 0},
		{"a namespace's, from its namespace", ns.control("/faults/" + inNs), 200, "", 0, 0},
		{"a namespace's, from the default world", "/_emulator/faults/" + inNs, 404, "fault_not_found", 0, 0},
		{"a namespace's, from another namespace", other.control("/faults/" + inNs), 404, "fault_not_found", 0, 0},
		{"the default world's, from a namespace", other.control("/faults/" + fired), 404, "fault_not_found", 0, 0},
		{"an unknown namespace", "/_emulator/namespaces/ns_nope/faults/" + idle, 404, "namespace_not_found", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.get(tt.path, "")
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
			if tt.status != 200 {
				return
			}
			f := decode[listedFault](t, r)
			if tt.hits >= 0 && f.Hits != tt.hits {
				t.Errorf("hits %d, want %d", f.Hits, tt.hits)
			}
			switch {
			case tt.near == -1 && f.NearMisses != nil:
				t.Errorf("a fault with hits has near_misses: %s", r.Body)
			case tt.near >= 0 && (f.NearMisses == nil || len(*f.NearMisses) != tt.near):
				t.Errorf("near_misses, want %d: %s", tt.near, r.Body)
			}
			if want, ok := listed[f.ID]; ok && string(want) != string(r.Body) {
				t.Errorf("single answer\n%s\nis not the listing's element\n%s", r.Body, want)
			}
		})
	}

	// a reset ends every API-added fault: 404; the scenario's is back with no hits
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	for _, id := range []string{idle, fired} {
		if r := e.get("/_emulator/faults/"+id, ""); r.Status != 404 || r.Code() != "fault_not_found" {
			t.Errorf("%s after reset: %d %q: %s", id, r.Status, r.Code(), r.Body)
		}
	}
	if r := e.get("/_emulator/faults/"+scn, ""); r.Status != 200 || decode[listedFault](t, r).Hits != 0 {
		t.Errorf("%s after reset: %d %s", scn, r.Status, r.Body)
	}
}

// GET /_emulator/faults/{id} is refused as every control route is: without the control
// token, and from a foreign origin.
func TestGetOneFaultGuarded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "ctl" })
	r := e.do(req{Method: "POST", Path: "/_emulator/faults", Token: "ctl", Body: map[string]any{"status": 503, "match": map[string]any{"path": "/nowhere", "service": "edge"}}})
	mustStatus(t, r, 201)
	path := "/_emulator/faults/" + decode[listedFault](t, r).ID
	for _, tt := range []struct {
		name    string
		token   string
		headers map[string]string
		status  int
		code    string
	}{
		{"no token", "", nil, 401, "missing_token"},
		{"wrong token", "wrong", nil, 401, "invalid_token"},
		{"a hosting token", "t-admin", nil, 401, "invalid_token"},
		{"foreign origin", "ctl", map[string]string{"Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"cross-site no-cors", "ctl", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "forbidden_origin"},
		{"control token", "ctl", nil, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{Method: "GET", Path: path, Token: tt.token, Headers: tt.headers})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("got %d %q, want %d %q: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}
}
