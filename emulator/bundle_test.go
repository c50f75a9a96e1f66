package emulator_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// busyWorld drives e into a world with something of everything: deployments queued,
// building, ready, failed and promoted, a domain mid-verification and one active,
// API faults with hits (one used up), a full journal, uploads, a minted token.
func busyWorld(t *testing.T, e *env) {
	t.Helper()
	content := "<h1>hello</h1>"
	digest := sha256hex(content)
	mustStatus(t, e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: content, Headers: map[string]string{"Content-Type": "application/octet-stream", "X-File-Digest": digest}}), 201)
	create := func() string {
		r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digest}})
		mustStatus(t, r, 201)
		return decode[emulator.DeploymentCreated](t, r).ID
	}
	ready := create()
	failed := create()
	e.advance("1m")
	mustStatus(t, e.post("/v1/deployments/"+ready+"/promote", "t-deploy", nil), 200)
	mustStatus(t, e.post("/_emulator/deployments/"+failed+"/status", "", map[string]any{"status": "error"}), 200)
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "active.example.test"}), 201)
	e.advance("20s")
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "verifying.example.test"}), 201)
	e.advance("3s") // pending 2 s, then verifying for 10 s
	create()        // queued
	building := create()
	_ = building
	e.advance("500ms")
	create()
	e.advance("700ms") // the first of the last three building, the last queued
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503, "times": 2}), 201)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/deployments/*", "method": "GET"}, "status": 500, "probability": 0.5}), 201)
	for range 3 {
		e.get("/v1/projects", "t-read")
	}
	for i := range 6 {
		e.get(fmt.Sprintf("/v1/deployments/dpl_%d", i), "t-read")
	}
	mustStatus(t, e.post("/_emulator/tokens", "", map[string]any{"scope": "deploy"}), 201)
}

func sha256hex(s string) string { return sha256Of([]byte(s)) }

// members lists a bundle's members and their contents.
func members(t *testing.T, tgz []byte) map[string][]byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = b
	}
}

func (e *env) putBundle(path string, tgz []byte) resp {
	return e.do(req{Method: "PUT", Path: path, Body: tgz, Headers: map[string]string{"Content-Type": "application/gzip"}})
}

// A busy world's bundle, replayed in a fresh emulator, is the same world at the same
// moment: the same state export to the byte, clock, faults and journal; and the same
// advance in both gives the same states.
func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	orig := newEnv(t, func(o *emulator.Options) { o.Seed = 7 })
	busyWorld(t, orig)
	r := orig.get("/_emulator/bundle", "")
	mustStatus(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/gzip" || !strings.Contains(r.Header.Get("Content-Disposition"), ".hostemu.tgz") {
		t.Fatalf("Content-Type %q, Content-Disposition %q", ct, r.Header.Get("Content-Disposition"))
	}
	m := members(t, r.Body)
	stateNow := orig.get("/_emulator/state", "")
	if !bytes.Equal(m["state.json"], stateNow.Body) {
		t.Fatalf("state.json is not GET /_emulator/state:\n%.300s\n%.300s", m["state.json"], stateNow.Body)
	}
	for _, name := range []string{"manifest.json", "faults.json", "lifecycles.json", "journal.ndjson", "events.ndjson", "scenarios/default.yaml", "files/" + sha256hex("<h1>hello</h1>")} {
		if _, ok := m[name]; !ok {
			t.Errorf("the bundle has no %s (it has %v)", name, keys(m))
		}
	}
	var man map[string]any
	if err := json.Unmarshal(m["manifest.json"], &man); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hostemu_version", "created_at", "namespace", "seed", "scenario", "clock", "rate_limits", "edge_domain", "cors_origins", "files"} {
		if _, ok := man[k]; !ok {
			t.Errorf("manifest.json has no %s: %s", k, m["manifest.json"])
		}
	}
	if man["seed"] != 7.0 || man["scenario"] != "default" {
		t.Errorf("manifest seed %v scenario %v", man["seed"], man["scenario"])
	}

	replay := newEnv(t) // seed 1, another clock: the bundle brings its own
	put := replay.putBundle("/_emulator/bundle", r.Body)
	mustStatus(t, put, 200)
	if got := replay.get("/_emulator/state", ""); !bytes.Equal(got.Body, stateNow.Body) {
		t.Fatalf("the replayed state differs from the bundle's:\n%.400s\n%.400s", got.Body, stateNow.Body)
	}
	for _, path := range []string{"/_emulator/clock", "/_emulator/faults"} {
		if a, b := orig.get(path, "").Body, replay.get(path, "").Body; !bytes.Equal(a, b) {
			t.Errorf("%s differs:\n%s\n%s", path, a, b)
		}
	}
	// journal.ndjson carries the answers (issue 33 item 7): the injected 503s with their
	// envelope and rate-limit headers
	var answered int
	for line := range strings.SplitSeq(strings.TrimSpace(string(m["journal.ndjson"])), "\n") {
		var en emulator.JournalEntry
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatal(err)
		}
		if r := en.Response; en.Status == 503 && r != nil && r.Status == 503 && strings.Contains(r.Body, "service_unavailable") && r.Headers.Get("X-RateLimit-Limit") != "" {
			answered++
		}
	}
	if answered != 2 {
		t.Errorf("journal.ndjson: %d injected 503s with their answer, want 2:\n%s", answered, m["journal.ndjson"])
	}
	var oj, rj struct{ Requests []map[string]any }
	json.Unmarshal(orig.get("/_emulator/requests", "").Body, &oj)
	json.Unmarshal(replay.get("/_emulator/requests", "").Body, &rj)
	if len(oj.Requests) == 0 || len(oj.Requests) != len(rj.Requests) {
		t.Fatalf("journal: %d entries, replayed %d", len(oj.Requests), len(rj.Requests))
	}
	for i := range oj.Requests {
		if rj.Requests[i]["replayed"] != true {
			t.Fatalf("replayed entry %d is not marked replayed: %v", i, rj.Requests[i])
		}
		delete(rj.Requests[i], "replayed")
		a, _ := json.Marshal(oj.Requests[i])
		b, _ := json.Marshal(rj.Requests[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("journal entry %d:\n%s\n%s", i, a, b)
		}
	}

	// the same from here on: the same transitions at the same instants, the same
	// fault dice, the same new ids
	for _, w := range []*env{orig, replay} {
		w.advance("400ms")
		w.get("/v1/projects", "t-read")
		for i := range 6 {
			w.get(fmt.Sprintf("/v1/deployments/dpl_x%d", i), "t-read")
		}
		mustStatus(t, w.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
		w.advance("2s")
	}
	if a, b := orig.get("/_emulator/state", "").Body, replay.get("/_emulator/state", "").Body; !bytes.Equal(a, b) {
		t.Fatalf("after the same advance the states differ:\n%s\n\n%s", a, b)
	}
	if a, b := orig.get("/_emulator/faults", "").Body, replay.get("/_emulator/faults", "").Body; !bytes.Equal(a, b) {
		t.Fatalf("after the same requests the faults differ:\n%s\n%s", a, b)
	}
	for _, w := range []*env{orig, replay} {
		w.advance("1h")
	}
	if a, b := orig.get("/_emulator/state", "").Body, replay.get("/_emulator/state", "").Body; !bytes.Equal(a, b) {
		t.Fatal("an hour later the states differ")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tgz builds a gzipped tar of members (name → content) in order; size, when given for
// a name, is written in its header instead of the content's length.
func tgz(t *testing.T, members [][2]string, size map[string]int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		n := int64(len(m[1]))
		if s, ok := size[m[0]]; ok {
			n = s
		}
		if err := tw.WriteHeader(&tar.Header{Name: m[0], Mode: 0o644, Size: n, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(m[1]))
	}
	if size == nil {
		tw.Close()
	}
	gz.Close()
	return buf.Bytes()
}

// A bad bundle is 400 naming its problem, and changes nothing.
func TestBundleRefusals(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	busyWorld(t, src)
	good := src.get("/_emulator/bundle", "").Body
	m := members(t, good)
	with := func(change map[string]string, extra ...[2]string) []byte { return rebuild(t, m, change, extra...) }
	var man map[string]any
	json.Unmarshal(m["manifest.json"], &man)
	man["format"], man["hostemu_version"] = 99, "v9.9.9"
	newer, _ := json.Marshal(man)
	badState := strings.Replace(string(m["state.json"]), `"status":"ready"`, `"status":"shipped"`, 1)
	// swap replaces old with new in member name, which must hold old
	swap := func(name, old, new string) []byte {
		if !strings.Contains(string(m[name]), old) {
			t.Fatalf("%s holds no %s", name, old)
		}
		return with(map[string]string{name: strings.Replace(string(m[name]), old, new, 1)})
	}
	firstCert := regexp.MustCompile(`"crt:[^"]*": "[^"]*"`).FindString(string(m["lifecycles.json"]))
	certKey, _, _ := strings.Cut(firstCert, ": ")

	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"truncated gzip", good[:len(good)/2], "truncated"},
		{"not gzip", []byte("PK\x03\x04 a zip file"), "not gzip"},
		{"a tar with no manifest", with(map[string]string{"manifest.json": "-"}), "no manifest.json"},
		{"a newer format", with(map[string]string{"manifest.json": string(newer)}), "format 99, written by hostemu v9.9.9; this hostemu"},
		{"a state that fails validation", with(map[string]string{"state.json": badState}), "state.json is not valid"},
		{"a path escaping the archive", with(nil, [2]string{"../../etc/cron.d/x", "boom"}), "escapes the archive"},
		{"an absolute path", with(nil, [2]string{"/etc/passwd", "x"}), "escapes the archive"},
		{"a member that is not a bundle's", with(nil, [2]string{"notes.txt", "x"}), `"notes.txt", which is not a member`},
		{"a file whose bytes do not hash to its name", with(nil, [2]string{"files/" + strings.Repeat("ab", 32), "x"}), "hash to"},
		{"a fault that is not valid", with(map[string]string{"faults.json": `{"faults":[{"id":"flt_1","source":"api","match":{},"status":999}],"scenario_faults":[],"next_id":2}`}), "faults.json"},
		{"an unknown key in the manifest", with(map[string]string{"manifest.json": strings.Replace(string(m["manifest.json"]), `"seed"`, `"sede"`, 1)}), "sede"},
		{"an archive over the size bound", tgz(t, [][2]string{{"manifest.json", string(m["manifest.json"])}, {"files/" + strings.Repeat("cd", 32), "x"}}, map[string]int64{"files/" + strings.Repeat("cd", 32): 600 << 20}), "more than its bound"},
		{"an empty body", nil, "not gzip"},
		// a value a member cannot hold is named by its key and place, never in
		// encoding/json's words ("cannot unmarshal string into Go struct field Manifest.seed")
		{"a manifest's seed not a number", swap("manifest.json", `"seed": 1`, `"seed": "x"`), `manifest.json: field "seed" must be a number, not string`},
		{"a manifest's seed not whole", swap("manifest.json", `"seed": 1`, `"seed": 1.5`), `manifest.json: field "seed" must be an integer, not 1.5`},
		{"a manifest's format a string", swap("manifest.json", `"format": 1`, `"format": "1"`), `manifest.json: field "format" must be a number, not string`},
		{"a manifest's clock not a time", swap("manifest.json", `"now": "`, `"now": "x`), `manifest.json: key "now" in clock: "x`},
		{"a manifest's dice not base64", swap("manifest.json", `"id_dice": "`, `"id_dice": "!!`), `manifest.json: key "id_dice": "!!`},
		{"a saved fault's status a string", with(map[string]string{"faults.json": `{"faults":[{"id":"flt_1","source":"api","match":{},"status":"503"}],"scenario_faults":[],"next_id":2}`}), `faults.json: field "faults.status" must be a number, not string`},
		{"a saved fault's delay", with(map[string]string{"faults.json": `{"faults":[{"id":"flt_1","source":"api","match":{},"status":503,"delay":"soon"}],"scenario_faults":[],"next_id":2}`}), `faults.json: field "faults.delay": invalid duration "soon"`},
		{"a lifecycle time", swap("lifecycles.json", firstCert, certKey+`: "soon"`), `lifecycles.json: key ` + certKey + `: "soon" is not an RFC 3339 time`},
		{"a journal seq a string", swap("journal.ndjson", `{"seq":1,`, `{"seq":"1",`), `journal.ndjson: line 1: field "seq" must be a number, not string`},
		{"a journal entry's unknown key", swap("journal.ndjson", `{"seq":1,`, `{"seq":1,"sequ":1,`), `journal.ndjson: line 1: unknown key "sequ" (did you mean "seq"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
			before, clockBefore, journalBefore := e.get("/_emulator/state", "").Body, e.get("/_emulator/clock", "").Body, e.get("/_emulator/requests", "").Body
			r := e.putBundle("/_emulator/bundle", tc.body)
			if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
				t.Fatalf("%d %s; want 400 invalid_request naming %q", r.Status, r.Body, tc.want)
			}
			if !bytes.Equal(e.get("/_emulator/state", "").Body, before) || !bytes.Equal(e.get("/_emulator/clock", "").Body, clockBefore) || !bytes.Equal(e.get("/_emulator/requests", "").Body, journalBefore) {
				t.Fatal("a refused bundle changed the world")
			}
		})
	}
	// the untouched bundle is taken, and a body that is not gzip by its type is 415
	e := newEnv(t)
	mustStatus(t, e.putBundle("/_emulator/bundle", with(nil)), 200)
	if r := e.do(req{Method: "PUT", Path: "/_emulator/bundle", Body: "{}", Headers: map[string]string{"Content-Type": "application/json"}}); r.Status != 415 {
		t.Errorf("a JSON body: %d %s", r.Status, r.Body)
	}
}

// A namespace's bundle goes into another namespace; the journal there is marked
// replayed, and the namespace list says where it came from.
func TestBundleBetweenNamespaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.newNamespace(t, map[string]any{"seed": 5})
	mustStatus(t, e.post("/v1/deployments", a.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	r := e.get(a.control("/bundle"), "")
	mustStatus(t, r, 200)
	var man struct{ Namespace string }
	json.Unmarshal(members(t, r.Body)["manifest.json"], &man)
	if man.Namespace != a.Namespace {
		t.Errorf("manifest namespace %q, want %q", man.Namespace, a.Namespace)
	}
	b := e.newNamespace(t, nil)
	put := e.putBundle(b.control("/bundle"), r.Body)
	mustStatus(t, put, 200)
	if !strings.Contains(string(put.Body), `"namespace":"`+a.Namespace+`"`) {
		t.Errorf("answer: %s", put.Body)
	}
	if !bytes.Equal(e.get(a.control("/state"), "").Body, e.get(b.control("/state"), "").Body) {
		// the tokens differ by namespace prefix: compare deployments only
		var sa, sb struct{ Deployments []map[string]any }
		json.Unmarshal(e.get(a.control("/state"), "").Body, &sa)
		json.Unmarshal(e.get(b.control("/state"), "").Body, &sb)
		if len(sa.Deployments) != len(sb.Deployments) {
			t.Fatalf("deployments: %d and %d", len(sa.Deployments), len(sb.Deployments))
		}
	}
	if !strings.Contains(string(e.get(b.control("/requests"), "").Body), `"replayed":true`) {
		t.Error("b's journal is not marked replayed")
	}
	if !strings.Contains(string(e.get("/_emulator/namespaces", "").Body), `"replayed"`) {
		t.Error("the namespace list does not say b was replayed")
	}
	// a gone, its tokens (in the replayed state) find b: the test's client works as is
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + a.Namespace}), 200)
	c := e.newNamespace(t, nil)
	mustStatus(t, e.putBundle(c.control("/bundle"), r.Body), 200)
	r2 := e.post("/v1/deployments", a.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r2, 201)
	id := decode[emulator.DeploymentCreated](t, r2).ID
	mustStatus(t, e.get(c.control("/deployments/"+id+"/logs"), ""), 200)
}

// Hostile bundles are refused within bounds, and a refused one leaves the scenario's
// fault counts as they were (a review found both).
func TestBundleHostileInputs(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	good := src.get("/_emulator/bundle", "").Body
	m := members(t, good)
	with := func(change map[string]string, extra ...[2]string) []byte { return rebuild(t, m, change, extra...) }
	var man map[string]any
	json.Unmarshal(m["manifest.json"], &man)
	man["namespace"] = "ns_" + strings.Repeat("a", 4096)
	longNS, _ := json.Marshal(man)
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"a journal of empty objects", with(map[string]string{"journal.ndjson": strings.Repeat("{}\n", 1<<20)}), "journal.ndjson: line 1: seq 0"},
		{"events of empty objects", with(map[string]string{"events.ndjson": strings.Repeat("{}\n", 1<<20)}), "events.ndjson: line 1: seq 0"},
		{"an event of an unknown type", with(map[string]string{"events.ndjson": `{"seq":1,"type":"nope","data":{}}` + "\n"}), `type "nope"`},
		{"a scenario over its bound", with(map[string]string{"scenarios/default.yaml": "name: default\nx: [" + strings.Repeat("0,", 1<<20) + "0]\n"}), "over the bound"},
		{"a long member name", with(nil, [2]string{"scenarios/" + strings.Repeat("a", 300) + ".yaml", ""}), "over 255"},
		{"a namespace that is no id", with(map[string]string{"manifest.json": string(longNS)}), "not a namespace id"},
		{"files over their bound", with(nil, [2]string{"files/" + strings.Repeat("ab", 32), strings.Repeat("x", 65<<20)}), "bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.putBundle("/_emulator/bundle", tc.body)
			if r.Status != 400 || !strings.Contains(r.Err(t).Message, tc.want) {
				t.Fatalf("%d %.300s; want 400 naming %q", r.Status, r.Body, tc.want)
			}
		})
	}
	// a bundle refused for its state leaves the scenario's faults' counts alone
	flaky := "name: flaky\ndescription: one 503\nfaults:\n  - {match: {path: /v1/projects}, status: 503, times: 1}\n"
	e := newEnv(t, func(o *emulator.Options) { o.ScenarioYAML = []string{flaky}; o.Scenario = "flaky" })
	mustStatus(t, e.get("/v1/projects", "t-read"), 503)
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	bad := strings.Replace(string(m["state.json"]), `"status":"ready"`, `"status":"shipped"`, 1)
	if r := e.putBundle("/_emulator/bundle", with(map[string]string{"state.json": bad})); r.Status != 400 {
		t.Fatalf("bad state: %d", r.Status)
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200) // the fault stays used up
	if r := e.get("/_emulator/coverage?namespaces=all&namespaces=all", ""); r.Status != 400 {
		t.Errorf("a repeated namespaces parameter: %d", r.Status)
	}
}

// rebuild is the bundle of members m again, with change's members in place of theirs
// ("-" leaves one out) and extra ones after.
func rebuild(t *testing.T, m map[string][]byte, change map[string]string, extra ...[2]string) []byte {
	t.Helper()
	var ms [][2]string
	for _, name := range []string{"manifest.json", "state.json", "faults.json", "lifecycles.json", "journal.ndjson", "events.ndjson", "scenarios/default.yaml"} {
		v, ok := change[name]
		if !ok {
			v = string(m[name])
		}
		if v != "-" {
			ms = append(ms, [2]string{name, v})
		}
	}
	names := keys(m)
	sort.Strings(names)
	for _, name := range names { // the uploads, which the manifest counts
		if _, ok := change[name]; !ok && strings.HasPrefix(name, "files/") {
			ms = append(ms, [2]string{name, string(m[name])})
		}
	}
	return tgz(t, append(ms, extra...), nil)
}

// #33: a replayed world's coverage travels in its bundle (coverage.json, counted again
// on replay, not 0 %), and a testkit's POST adds failure.txt, which the replay shows.
func TestBundleCarriesCoverageAndFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.newNamespace(t, nil)
	mustStatus(t, e.get("/v1/projects", a.Tokens.Read), 200)
	mustStatus(t, e.get("/v1/projects", ""), 401)
	mustStatus(t, e.get("/v1/deployments/dpl_nope", a.Tokens.Read), 404)
	want := e.coverage(t, a.control("/coverage"))

	const failure = "AssertionError: expected 'ready' to be 'error'\n    at checkout.test.js:12:5\n"
	r := e.do(req{Method: "POST", Path: a.control("/bundle"), Body: map[string]any{"failure": failure}})
	mustStatus(t, r, 200)
	m := members(t, r.Body)
	if string(m["failure.txt"]) != failure {
		t.Errorf("failure.txt %q, want %q", m["failure.txt"], failure)
	}
	if _, ok := m["coverage.json"]; !ok {
		t.Fatalf("no coverage.json in %v", keys(m))
	}
	if _, ok := members(t, e.get(a.control("/bundle"), "").Body)["failure.txt"]; ok {
		t.Error("GET's bundle has a failure.txt")
	}

	b := e.newNamespace(t, nil)
	mustStatus(t, e.get("/v1/deployments", b.Tokens.Read), 200) // replaced by the bundle's counts
	put := e.putBundle(b.control("/bundle"), r.Body)
	mustStatus(t, put, 200)
	var answer struct {
		Replayed struct{ Failure string }
	}
	json.Unmarshal(put.Body, &answer)
	if answer.Replayed.Failure != failure {
		t.Errorf("PUT's replayed.failure %q", answer.Replayed.Failure)
	}
	got := e.coverage(t, b.control("/coverage"))
	if got.c.Totals != want.c.Totals || got.resp["GET /v1/projects 200 null"] != 1 || got.resp["GET /v1/deployments/{id} 404 deployment_not_found"] != 1 || got.ops["GET /v1/deployments"] != 0 {
		t.Errorf("the replayed world's coverage %+v, want the bundle's %+v", got.c.Totals, want.c.Totals)
	}
	// the dashboard's overview says it; the namespace list its first line only
	var overview struct {
		Replayed struct{ Failure string }
	}
	json.Unmarshal(e.get(b.control("/projects"), "").Body, &overview)
	if overview.Replayed.Failure != failure {
		t.Errorf("overview replayed.failure %q", overview.Replayed.Failure)
	}
	if list := string(e.get("/_emulator/namespaces", "").Body); !strings.Contains(list, `"failure":"AssertionError: expected 'ready' to be 'error' …"`) {
		t.Errorf("the namespace list lacks the failure's first line: %s", list)
	}

	// the body is strict and bounded
	for _, tc := range []struct {
		body   any
		status int
		want   string
	}{
		{map[string]any{"failur": "x"}, 400, `did you mean \"failure\"?`},
		{map[string]any{"failure": 3}, 400, "failure"},
		{map[string]any{"failure": strings.Repeat("x", 64<<10+1)}, 413, "over the bound of 65536"},
		{strings.Repeat(`\u0000`, 100<<10), 413, "over the limit"},
	} {
		body := tc.body
		if s, ok := body.(string); ok {
			body = `{"failure":"` + s + `"}`
		}
		r := e.do(req{Method: "POST", Path: a.control("/bundle"), Body: body})
		if r.Status != tc.status || !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("POST %.60v: %d %s, want %d naming %q", tc.body, r.Status, r.Body, tc.status, tc.want)
		}
	}
	// exactly at the bound, and an empty body: the bundle, failure.txt as far as given
	r = e.do(req{Method: "POST", Path: "/_emulator/bundle", Body: map[string]any{"failure": strings.Repeat("é", 32<<10)}})
	mustStatus(t, r, 200)
	if n := len(members(t, r.Body)["failure.txt"]); n != 64<<10 {
		t.Errorf("failure.txt of %d bytes, want %d", n, 64<<10)
	}
	r = e.do(req{Method: "POST", Path: "/_emulator/bundle"})
	mustStatus(t, r, 200)
	if _, ok := members(t, r.Body)["failure.txt"]; ok {
		t.Error("a POST without failure wrote failure.txt")
	}
}
