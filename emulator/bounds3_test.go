package emulator_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A state that can never fit the budget of bytes in flight is 413 naming it, not 503
// "retry in a second" (issue 32): a retry would fail the same way.
func TestStateThatCanNeverFitIs413(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Limits.MaxBodyBytesInFlight = 1 << 20 })
	var b strings.Builder
	b.WriteString(`{"tokens":[`)
	for i := range 20_000 { // about 6 MB decoded, against a budget of 1 MiB
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"token":"hostemu_t%07d","scope":"read"}`, i)
	}
	b.WriteString("]}")
	before := e.get("/_emulator/state", "").Body
	r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: b.String()})
	if r.Status != 413 || r.Code() != "payload_too_large" || !strings.Contains(r.Err(t).Message, "--max-body-bytes-in-flight") || r.Header.Get("Retry-After") != "" {
		t.Fatalf("%d %s (Retry-After %q); want 413 naming the bound", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if string(e.get("/_emulator/state", "").Body) != string(before) {
		t.Error("a refused import changed the state")
	}
}

// A state import applies the API's hostname rules (issue 32): a custom domain under
// .localhost or the edge domain, which POST .../domains refuses with 400
// invalid_hostname, was taken by PUT /_emulator/state, and the edge served it.
func TestImportAppliesHostnameRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := string(e.get("/_emulator/state", "").Body)
	for _, host := range []string{"app.localhost", "*.pwn.localhost", "x.hostemu.localhost"} {
		if r := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": host}); r.Status != 400 || r.Code() != "invalid_hostname" {
			t.Fatalf("the API took %s: %d", host, r.Status)
		}
		body := replaceOnce(t, good, `"hostname":"shop.test"`, `"hostname":"`+host+`"`)
		r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: body})
		if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, "keeps for itself") {
			t.Errorf("an import of %s: %d %s", host, r.Status, r.Body)
		}
		if now := string(e.get("/_emulator/state", "").Body); now != good {
			t.Fatal("a refused import changed the state")
		}
	}
}

// A bundle's manifest counts are checked against its members (issue 32): a manifest
// saying journal_entries 1e9, events -5 or files.bytes -1 was taken as it was.
func TestBundleManifestCountsChecked(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	busyWorld(t, src)
	m := members(t, src.get("/_emulator/bundle", "").Body)
	lying := func(change func(man map[string]any)) []byte {
		var man map[string]any
		json.Unmarshal(m["manifest.json"], &man)
		change(man)
		text, _ := json.Marshal(man)
		return rebuild(t, m, map[string]string{"manifest.json": string(text)})
	}
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"journal_entries 1e9", func(man map[string]any) { man["journal_entries"] = 1_000_000_000 }, "journal_entries is 1000000000, but journal.ndjson holds"},
		{"events -5", func(man map[string]any) { man["events"] = -5 }, "events is -5"},
		{"files.bytes -1", func(man map[string]any) { man["files"].(map[string]any)["bytes"] = -1 }, "files.bytes is -1"},
		{"files.included 7", func(man map[string]any) { man["files"].(map[string]any)["included"] = 7 }, "files.included is 7"},
		{"files.bound -1", func(man map[string]any) { man["files"].(map[string]any)["bound"] = -1 }, "files.bound is -1"},
	} {
		r := e.putBundle("/_emulator/bundle", lying(tc.change))
		if r.Status != 400 || !strings.Contains(r.Err(t).Message, tc.want) {
			t.Errorf("%s: %d %.300s; want 400 naming %q", tc.name, r.Status, r.Body, tc.want)
		}
	}
	mustStatus(t, e.putBundle("/_emulator/bundle", rebuild(t, m, nil)), 200)
}

// Faults are bounded in number (issue 32): 51,193 faults from one bundle took
// GET /v1/projects from 0.29 to 0.89 ms (every request is matched against each).
// --max-faults (1,000 by default) bounds what a world holds, API-added and its
// scenario's together: beyond, POST /_emulator/faults, switching to a scenario, and a
// bundle are 400 naming the flag, and change nothing.
func TestMaxFaults(t *testing.T) {
	t.Parallel()
	many := "name: many\ndescription: three faults\nfaults:\n" + strings.Repeat("  - {match: {path: /v1/deployments/nothing}, status: 503}\n", 3)
	e := newEnv(t, func(o *emulator.Options) { o.MaxFaults = 3; o.ScenarioYAML = []string{many} })
	fault := map[string]any{"match": map[string]any{"path": "/v1/deployments/nothing"}, "status": 503}
	for range 3 {
		mustStatus(t, e.post("/_emulator/faults", "", fault), 201)
	}
	r := e.post("/_emulator/faults", "", fault)
	if r.Status != 400 || !strings.Contains(r.Err(t).Message, "--max-faults") {
		t.Fatalf("a fourth fault: %d %s", r.Status, r.Body)
	}
	bundle := e.get("/_emulator/bundle", "").Body // three API faults
	r = e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "many"}})
	if r.Status != 400 || !strings.Contains(r.Err(t).Message, "--max-faults") {
		t.Fatalf("switching to a scenario of three more: %d %s", r.Status, r.Body)
	}
	// a bundle of three faults goes into a world that holds at most two
	two := newEnv(t, func(o *emulator.Options) { o.MaxFaults = 2 })
	r = two.putBundle("/_emulator/bundle", bundle)
	if r.Status != 400 || !strings.Contains(r.Err(t).Message, "--max-faults") {
		t.Fatalf("a bundle of three faults, at most two: %d %s", r.Status, r.Body)
	}
	if f := two.get("/_emulator/faults", "").Body; strings.Contains(string(f), "flt_") {
		t.Errorf("a refused bundle added faults: %s", f)
	}
}
