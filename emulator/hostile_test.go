package emulator_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// The hostile-input pass: each test holds one input that once got a wrong answer.

// Two of a namespace's own scenario documents naming one scenario are a problem on the
// second, as two files of --scenarios naming one are: silently keeping either would let
// a test run against the scenario it did not mean.
func TestNamespaceScenariosNamedTwiceAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/namespaces", "", map[string]any{
		"scenarios": []string{"name: mine\ndescription: first\n", "name: mine\ndescription: second\n"},
	})
	mustStatus(t, r, http.StatusBadRequest)
	if msg := r.Err(t).Message; !strings.Contains(msg, `scenarios[1]:1: scenario "mine" is already defined in scenarios[0]`) {
		t.Errorf("message %q does not name the second document and the first", msg)
	}
}

// A namespace's inline fixtures' problems read as its scenarios' do: `field "fixtures":`
// then each problem at its line, not "fixtures:; fixtures:1:1: …".
func TestNamespaceFixturesProblemNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/namespaces", "", map[string]any{"fixtures": map[string]any{"projectz": []any{}}})
	mustStatus(t, r, http.StatusBadRequest)
	want := `field "fixtures": fixtures:1:2: unknown key "projectz" (did you mean "projects"?)`
	if msg := r.Err(t).Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// The same for a problem fixtures show only once built (a dangling reference).
func TestNamespaceFixturesBuildProblemNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/namespaces", "", map[string]any{"fixtures": map[string]any{
		"projects": []any{map[string]any{"id": "prj_a", "name": "a", "production_deployment_id": "dpl_nope"}},
	}})
	mustStatus(t, r, http.StatusBadRequest)
	want := `field "fixtures": fixtures:1: project "prj_a": production_deployment_id "dpl_nope": no such deployment`
	if msg := r.Err(t).Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// A forbidden_host answer's doc_url names the address the request came in on, as an
// edge error's does, not the refused Host: that name is not hostemu's (a link to it
// is refused the same way), and a broken one ("[::1", "a%00") made a broken URL.
func TestForbiddenHostLinksToTheListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, host := range []string{"rebind.evil.example", "[::1", "evil.test%00"} {
		r := e.do(req{Method: "GET", Path: "/_emulator/state", Host: host})
		mustStatus(t, r, http.StatusForbidden)
		if got, want := r.Err(t).DocURL, e.url+"/docs/errors/forbidden_host"; got != want {
			t.Errorf("Host %q: doc_url %q, want %q", host, got, want)
		}
	}
}

// The forbidden_host page says what the guard does: a *.localhost name is refused (the
// edge serves pages there), not listed among the names that pass.
func TestForbiddenHostPageDoesNotAllowStarLocalhost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/docs/errors/forbidden_host", "")
	mustStatus(t, r, http.StatusOK)
	if page := string(r.Body); strings.Contains(page, "localhost, *.localhost") || !strings.Contains(page, "never a *.localhost name") {
		t.Errorf("the page does not say *.localhost names are refused:\n%s", page)
	}
}

// A suffix range of length 0 (bytes=-0) selects nothing: 416 with Content-Range
// bytes */size, as any unsatisfiable range is (RFC 9110 §14.1.2), not a 206 with the
// impossible Content-Range bytes 100-99/100 that http.ServeContent sends for it. Beside
// a satisfiable range it is dropped.
func TestEdgeEmptySuffixRangeIsUnsatisfiable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.readySite(t, strings.Repeat("0123456789", 10))
	for _, rng := range []string{"bytes=-0", "bytes= -0 ", "bytes=-0,-00"} {
		r := e.edgeGet(h, "/", map[string]string{"Range": rng})
		if r.Status != http.StatusRequestedRangeNotSatisfiable || r.Header.Get("Content-Range") != "bytes */100" {
			t.Errorf("Range %q: %d, Content-Range %q", rng, r.Status, r.Header.Get("Content-Range"))
		}
	}
	r := e.edgeGet(h, "/", map[string]string{"Range": "bytes=-0,2-4"})
	if r.Status != http.StatusPartialContent || string(r.Body) != "234" || r.Header.Get("Content-Range") != "bytes 2-4/100" {
		t.Errorf("Range bytes=-0,2-4: %d %q, Content-Range %q", r.Status, r.Body, r.Header.Get("Content-Range"))
	}
}

// Every range the edge cannot satisfy (one past the file's end, a malformed one, an
// empty suffix) is the edge's own 416 range_not_satisfiable: its error page, or the JSON
// envelope to a client that prefers JSON, with X-Hostemu-Error, in the journal as the
// other edge errors are; Content-Range bytes */size where the range parsed. Go's
// text/plain 416 was sent for all of them but -0.
func TestEdgeUnsatisfiableRangeIsTheEdgesError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := e.readySite(t, strings.Repeat("0123456789", 10))
	for _, tc := range []struct{ rng, contentRange string }{
		{"bytes=9999-", "bytes */100"},
		{"bytes=100-", "bytes */100"},
		{"bytes=100-200,300-", "bytes */100"},
		{"bytes=-0", "bytes */100"},
		{"bytes=5-2", ""},
		{"bytes=abc", ""},
	} {
		for _, accept := range []string{"text/html", "application/json"} {
			r := e.edgeGet(h, "/", map[string]string{"Range": tc.rng, "Accept": accept})
			if r.Status != http.StatusRequestedRangeNotSatisfiable || r.Header.Get("Content-Range") != tc.contentRange {
				t.Errorf("Range %q: %d, Content-Range %q", tc.rng, r.Status, r.Header.Get("Content-Range"))
			}
			if edgeCode(r) != "range_not_satisfiable" {
				t.Errorf("Range %q: X-Hostemu-Error %q", tc.rng, edgeCode(r))
			}
			if accept == "application/json" {
				if got := r.Err(t); got.Code != "range_not_satisfiable" || !strings.Contains(got.Message, "100 bytes") {
					t.Errorf("Range %q: envelope %+v", tc.rng, got)
				}
			} else if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.Contains(string(r.Body), "416 range_not_satisfiable") {
				t.Errorf("Range %q: %s %q", tc.rng, ct, r.Body)
			}
		}
	}
	j := e.get("/_emulator/requests?service=edge&status=416", "")
	if n := strings.Count(string(j.Body), `"error_code":"range_not_satisfiable"`); n != 12 {
		t.Errorf("%d journal entries with error_code range_not_satisfiable, want 12: %.500s", n, j.Body)
	}
	// HEAD answers what GET would, as http.ServeContent does (PRODUCT: HEAD and Range as
	// ServeContent does them), with no body; a range beside an unsatisfiable one is served
	r := e.do(req{Method: "HEAD", Path: "/", Host: h, Headers: map[string]string{"Range": "bytes=9999-"}})
	if r.Status != http.StatusRequestedRangeNotSatisfiable || edgeCode(r) != "range_not_satisfiable" || len(r.Body) != 0 || r.Header.Get("Content-Range") != "bytes */100" {
		t.Errorf("HEAD, Range bytes=9999-: %d %q, Content-Range %q, body %q", r.Status, edgeCode(r), r.Header.Get("Content-Range"), r.Body)
	}
	r = e.edgeGet(h, "/", map[string]string{"Range": "bytes=9999-,0-3"})
	if r.Status != http.StatusPartialContent || string(r.Body) != "0123" || r.Header.Get("Content-Range") != "bytes 0-3/100" {
		t.Errorf("Range bytes=9999-,0-3: %d %q, Content-Range %q", r.Status, r.Body, r.Header.Get("Content-Range"))
	}
}

// A header that must come once, sent twice, is refused rather than read as its first
// copy: a test whose client adds a second Authorization (or X-File-Digest) must not pass
// on the first one.
func TestHeadersSentTwiceAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	send := func(method, path string, h http.Header, body string) resp {
		t.Helper()
		hr, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header = h
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{Status: res.StatusCode, Header: res.Header, Body: b}
	}
	for _, toks := range [][]string{{"Bearer t-read", "Bearer nope"}, {"Bearer nope", "Bearer t-read"}, {"Bearer t-read", "Bearer t-read"}, {"", "Bearer t-read"}} {
		r := send("GET", "/v1/projects", http.Header{"Authorization": toks}, "")
		mustStatus(t, r, http.StatusUnauthorized)
		if er := r.Err(t); er.Code != "invalid_token" || !strings.Contains(er.Message, "2 Authorization headers") {
			t.Errorf("%q: %s %q", toks, er.Code, er.Message)
		}
	}
	sum := sha256.Sum256([]byte("hello"))
	good := hex.EncodeToString(sum[:])
	for _, digests := range [][]string{{good, strings.Repeat("0", 64)}, {good, good}} {
		r := send("POST", "/v1/files", http.Header{"Authorization": {"Bearer t-deploy"}, "X-File-Digest": digests}, "hello")
		mustStatus(t, r, http.StatusBadRequest)
		if er := r.Err(t); er.Code != "digest_mismatch" || !strings.Contains(er.Message, "sent 2 times") {
			t.Errorf("%q: %s %q", digests, er.Code, er.Message)
		}
	}
}

// A namespace asked for the scenario "" gets 404 scenario_not_found, as PUT
// /_emulator/scenarios/active {"name":""} does, not the built-in default: that is
// neither what it named nor the server's start-up scenario, which leaving the field out
// gives.
func TestNamespaceEmptyScenarioIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Scenario = "instant" })
	r := e.post("/_emulator/namespaces", "", map[string]any{"scenario": ""})
	mustStatus(t, r, http.StatusNotFound)
	if er := r.Err(t); er.Code != "scenario_not_found" || !strings.Contains(er.Message, `scenario "" not found`) {
		t.Errorf("%s %q", er.Code, er.Message)
	}
	r = e.post("/_emulator/namespaces", "", map[string]any{})
	mustStatus(t, r, http.StatusCreated)
	ns := decode[struct {
		ControlURL string `json:"control_url"`
	}](t, r)
	path := strings.TrimPrefix(ns.ControlURL, e.url)
	if r := e.get(path+"/scenarios", ""); !strings.Contains(string(r.Body), `"active":"instant"`) {
		t.Errorf("a namespace created without scenario: %s, want the server's instant", r.Body)
	}
}

// A fixture's custom domain under a name hostemu keeps for itself (localhost, the edge
// domain) is refused, as the API and a state import refuse it: the world it made could
// not be imported from its own export, and the edge would serve a page on a name that
// shares an origin with hostemu's own.
func TestFixtureDomainUnderAKeptNameIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for host, want := range map[string]string{
		"x.localhost":               `field "fixtures": fixtures:1:38: projects[0].domains[0].hostname: "x.localhost" is under "localhost", which hostemu keeps for itself (the API refuses it: invalid_hostname); use a name under .test or .example`,
		"shop.ns.hostemu.localhost": `is under "localhost"`,
	} {
		r := e.post("/_emulator/namespaces", "", map[string]any{"fixtures": map[string]any{
			"projects": []any{map[string]any{"id": "prj_a", "name": "a", "domains": []any{map[string]any{"hostname": host}}}},
		}})
		mustStatus(t, r, http.StatusBadRequest)
		if msg := r.Err(t).Message; !strings.Contains(msg, want) {
			t.Errorf("%s: message %q, want %q", host, msg, want)
		}
	}
	// under a custom --edge-domain, known only when the world is built
	dir := t.TempDir()
	writeFile(t, dir+"/f.yaml", "projects:\n  - {id: prj_a, name: a, domains: [{hostname: shop.emu.test}]}\n")
	_, err := emulator.New(emulator.Options{Fixtures: dir + "/f.yaml", EdgeDomain: "emu.test", ClockMode: clock.Manual, ClockStart: testStart})
	if err == nil || !strings.Contains(err.Error(), `domain "shop.emu.test": the hostname is under "emu.test", which hostemu keeps for itself`) {
		t.Errorf("edge domain: %v", err)
	}
}

// redirect_to "" is no hostname: 400 invalid_hostname, as a target of "" is 400; it was
// read as null (no redirect), so a template that left it empty made a domain that
// serves rather than redirects.
func TestDomainEmptyRedirectIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "old.shop.test", "redirect_to": ""})
	mustStatus(t, r, http.StatusBadRequest)
	if er := r.Err(t); er.Code != "invalid_hostname" || !strings.Contains(er.Message, `field "redirect_to": "" is not a fully qualified domain name`) {
		t.Errorf("%s %q", er.Code, er.Message)
	}
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "old.shop.test"}), http.StatusCreated)
}

// A clock start in the year 2200 is refused (no emulated time reaches 2200), so the
// messages that refuse it name the last year allowed, 2199, not "1970 to 2200".
func TestClockStartYearRangeIsSaidExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/namespaces", "", map[string]any{"clock_start": "2200-06-01T00:00:00Z"})
	mustStatus(t, r, http.StatusBadRequest)
	if msg := r.Err(t).Message; !strings.Contains(msg, "from 1970 to 2199") {
		t.Errorf("namespace: %q", msg)
	}
	mustStatus(t, e.post("/_emulator/namespaces", "", map[string]any{"clock_start": "2199-01-01T00:00:00Z"}), http.StatusCreated)
	_, err := emulator.New(emulator.Options{ClockMode: clock.Manual, ClockStart: time.Date(2200, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), "outside the years 1970 to 2199") {
		t.Errorf("New: %v", err)
	}
}

// The same for a state import: a created_at in 2200 is refused naming 1970-2199.
func TestStateYearRangeIsSaidExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var st map[string]any
	if err := jsonUnmarshal(e.get("/_emulator/state", "").Body, &st); err != nil {
		t.Fatal(err)
	}
	deps := st["deployments"].([]any)
	deps[0].(map[string]any)["created_at"] = "2200-06-01T00:00:00.000Z"
	r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: st})
	mustStatus(t, r, http.StatusBadRequest)
	if msg := r.Err(t).Message; !strings.Contains(msg, "created_at is outside 1970-2199") {
		t.Errorf("message %q", msg)
	}
}

// An edge request naming a namespace that does not exist (never created, deleted,
// expired, a typo) by X-Hostemu-Namespace or proxy credentials is 404
// namespace_not_found, and so is a CONNECT naming one: it was served by the default
// world, whose custom domain of the same name could answer in the namespace's stead.
func TestEdgeUnknownNamespaceIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const host = "shop.test" // a custom domain of the default world's fixtures
	if r := e.edgeGet(host, "/", nil); r.Status != http.StatusOK && edgeCode(r) != "" {
		t.Fatalf("the default world's domain: %d %s", r.Status, edgeCode(r))
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ns_nope:"))
	for _, h := range []map[string]string{{"X-Hostemu-Namespace": "ns_nope"}, {"Proxy-Authorization": basic}} {
		r := e.edgeGet(host, "/", h)
		if r.Status != http.StatusNotFound || edgeCode(r) != "namespace_not_found" || !strings.Contains(string(r.Body), "ns_nope") {
			t.Errorf("%v: %d %s %.200s", h, r.Status, edgeCode(r), r.Body)
		}
	}
	// with a namespace alive, the same
	mustStatus(t, e.post("/_emulator/namespaces", "", map[string]any{}), http.StatusCreated)
	if r := e.edgeGet(host, "/", map[string]string{"X-Hostemu-Namespace": "ns_nope"}); edgeCode(r) != "namespace_not_found" {
		t.Errorf("beside a live namespace: %d %s", r.Status, edgeCode(r))
	}
	r := e.do(req{Method: "CONNECT", Path: "", Host: host + ":443", Headers: map[string]string{"Proxy-Authorization": basic}})
	if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "namespace_not_found") {
		t.Errorf("CONNECT: %d %.200s", r.Status, r.Body)
	}
	// the page the error links to says so, not only "Control API"
	if page := e.get("/docs/errors/namespace_not_found", ""); !strings.Contains(string(page.Body), "X-Hostemu-Namespace") {
		t.Errorf("the namespace_not_found page does not name the edge's case:\n%.500s", page.Body)
	}
}

// An await that would wait in wall time (a requests condition on any clock; any
// condition on a real or scaled clock) is refused past a day, as a fault's delay is: a
// client could otherwise hold a request and its goroutine for a century. On a manual
// clock a deployment's or domain's await costs no wall time, and may span years.
func TestAwaitWallTimeIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"path": "/v1/nothing"}, "count": 1, "timeout": "25h"})
	mustStatus(t, r, http.StatusBadRequest)
	if msg := r.Err(t).Message; !strings.Contains(msg, `field "timeout"`) || !strings.Contains(msg, "at most 24h") {
		t.Errorf("requests: %q", msg)
	}
	mustStatus(t, e.post("/_emulator/await", "", map[string]any{"deployment": "dpl_first", "status": "ready", "timeout": "3650d"}), http.StatusOK)
	real := newEnv(t, func(o *emulator.Options) { o.ClockMode = clock.Real })
	r = real.post("/_emulator/await", "", map[string]any{"deployment": "dpl_first", "status": "ready", "timeout": "25h"})
	mustStatus(t, r, http.StatusBadRequest)
	if msg := r.Err(t).Message; !strings.Contains(msg, "at most 24h") {
		t.Errorf("real clock: %q", msg)
	}
}

// The hosting API and fixtures accept the same env variable names and the same
// redirect_to targets, by one rule each (state.ValidEnvName, state.CheckRedirect): a
// name a shell would take; any other hostname than the domain's own, except one under
// localhost or the edge domain, which hostemu keeps. The API took "A=B" and a redirect
// to app.localhost, which fixtures refused; fixtures refused a redirect to a name
// outside the project, which the API (and the spec: "a hostname") takes.
func TestAPIAndFixturesAgreeOnEnvNamesAndRedirects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixtureOK := func(src string) (bool, error) {
		path := t.TempDir() + "/f.yaml"
		writeFile(t, path, src)
		emu, err := emulator.New(emulator.Options{Fixtures: path, ClockMode: clock.Manual, ClockStart: testStart})
		if err != nil {
			return false, err
		}
		emu.Close()
		return true, nil
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"NODE_ENV", true}, {"_x1", true}, {"a", true},
		{"A=B", false}, {"1X", false}, {"A-B", false}, {"A B", false}, {"É", false},
	} {
		r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "env": map[string]string{tc.name: "v"}})
		if apiOK := r.Status == 201; apiOK != tc.ok {
			t.Errorf("API, env %q: %d %s", tc.name, r.Status, r.Body)
		} else if !tc.ok && (r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, strconv.Quote(tc.name))) {
			t.Errorf("API, env %q: %s, not naming it", tc.name, r.Body)
		}
		if ok, err := fixtureOK("projects:\n  - id: prj_a\n    name: a\n    env: {" + strconv.Quote(tc.name) + ": v}\n"); ok != tc.ok {
			t.Errorf("fixtures, env %q: %v", tc.name, err)
		}
	}
	for i, tc := range []struct {
		to string
		ok bool
	}{
		{"shop.test", true}, {"example.com", true}, {"www.other.test", true},
		{"localhost", false}, {"app.localhost", false}, {"hostemu.localhost", false}, {"x.hostemu.localhost", false},
	} {
		host := "r" + strconv.Itoa(i) + ".shop.test"
		r := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": host, "redirect_to": tc.to})
		if apiOK := r.Status == 201; apiOK != tc.ok {
			t.Errorf("API, redirect_to %q: %d %s", tc.to, r.Status, r.Body)
		} else if !tc.ok && r.Code() != "invalid_hostname" {
			t.Errorf("API, redirect_to %q: %s", tc.to, r.Body)
		}
		src := "projects:\n  - id: prj_a\n    name: a\n    domains:\n      - {hostname: shop.test}\n      - {hostname: " + host + ", redirect_to: " + tc.to + "}\n"
		if ok, err := fixtureOK(src); ok != tc.ok {
			t.Errorf("fixtures, redirect_to %q: %v", tc.to, err)
		}
	}
}

// A state that an older hostemu wrote, holding a redirect_to under localhost or the
// edge domain (its API accepted one), still imports: only the API and fixtures refuse a
// new one. A hostname under them stays refused, import or not.
func TestImportKeepsAnOlderRedirectToAKeptName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := string(e.get("/_emulator/state", "").Body)
	if !strings.Contains(st, `"redirect_to":"shop.test"`) {
		t.Fatalf("no redirect in the fixtures' state: %.400s", st)
	}
	for _, to := range []string{"app.localhost", "x.hostemu.localhost"} {
		doc := strings.Replace(st, `"redirect_to":"shop.test"`, `"redirect_to":"`+to+`"`, 1)
		mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: doc}), http.StatusOK)
	}
	doc := strings.Replace(st, `"hostname":"shop.test"`, `"hostname":"shop.localhost"`, 1)
	if r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: doc}); r.Status != http.StatusBadRequest {
		t.Errorf("a hostname under localhost imported: %d %s", r.Status, r.Body)
	}
}

// A failure over bundle.MaxFailure bytes is 413 with a hint of how much to send, cut on
// a character's boundary: following it sends whole UTF-8 (a cut é would arrive as
// U+FFFD), and is accepted.
func TestOversizedFailureHintCutsOnARune(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	failure := "a" + strings.Repeat("é", 32768) // byte 65,536 is the second of an é
	r := e.post("/_emulator/bundle", "", map[string]string{"failure": failure})
	mustStatus(t, r, http.StatusRequestEntityTooLarge)
	if msg := r.Err(t).Message; !strings.Contains(msg, "send its first 65535 bytes") {
		t.Fatalf("message %q does not cut on the é", msg)
	}
	mustStatus(t, e.post("/_emulator/bundle", "", map[string]string{"failure": failure[:65535]}), http.StatusOK)
}

// A key given twice inside a state document's element (a token's scope) is refused
// as at the state's top and in control bodies: encoding/json would keep the last, and
// {"scope":"admin","scope":"read"} would quietly import a read token.
func TestStateElementKeyGivenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ doc, want string }{
		{`{"tokens":[{"token":"t-x","scope":"admin","scope":"read"}]}`, `key "scope" in tokens is given twice: give it once`},
		{`{"projects":[{"id":"prj_x","name":"x","created_at":"2026-11-01T00:00:00Z","env":{"A":"1","A":"2"}}]}`, `key "A" in projects.env is given twice`},
		// a time its element cannot hold, named (it was encoding/json's words after "field")
		{`{"projects":[{"id":"prj_x","name":"x","created_at":"yesterday"}]}`, `key "created_at" in projects: "yesterday" is not an RFC 3339 time like 2026-11-01T10:00:00Z`},
		{`{"projects":[{"id":"prj_x","name":"x","created_at":"2026-11-01T00:00:00Z"}],"deployments":[{"id":"dpl_x","project_id":"prj_x","files":{},"timings":{"queued_at":"soon"}}]}`, `key "queued_at" in deployments.timings: "soon" is not an RFC 3339 time`},
		// base64 its element cannot hold, named (it was "field illegal base64 data at input
		// byte 0"), and a number where base64 goes is a string wanted, not an array
		{`{"cipher":{"master_keys":[{"id":"m","key":"!!"}]}}`, `key "key" in cipher.master_keys: "!!" is not base64 (standard alphabet, padded)`},
		{`{"uploads":[{"digest":"a","content":"!!"}]}`, `key "content" in uploads: "!!" is not base64`},
		{`{"cipher":{"master_keys":[{"id":"m","key":5}]}}`, `field "cipher.master_keys.key" must be a string, not number`},
		// a map's value of the wrong type is named by its key (was field "projects.env")
		{`{"projects":[{"id":"prj_x","name":"x","created_at":"2026-11-01T00:00:00Z","env":{"A":"1","B":5}}]}`, `key "B" in projects.env must be a string, not number`},
		// a state document's enum value names the closest known one
		{`{"tokens":[{"token":"t-x","scope":"raed"}]}`, `tokens: unknown scope "raed" (did you mean "read"?)`},
	} {
		r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: tc.doc})
		if r.Status != http.StatusBadRequest || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
			t.Errorf("%s: %d %s, want 400 %q", tc.doc, r.Status, r.Body, tc.want)
		}
	}
	if r := e.get("/v1/projects", "t-read"); r.Status != http.StatusOK {
		t.Fatalf("the world was changed by a refused import: %d %s", r.Status, r.Body)
	}
}

// A key given twice inside a deployment of a state document is refused as in the
// state's other elements: the deployment reader kept the last of a repeated env or
// files key, and the deployment's own fields went to a decoder that kept the last too.
func TestStateDeploymentKeyGivenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/_emulator/state", "")
	mustStatus(t, r, http.StatusOK)
	doc := string(r.Body)
	for _, tc := range []struct{ old, new, want string }{
		{`"env":{"FEATURE_X":"on"}`, `"env":{"FEATURE_X":"on","FEATURE_X":"off"}`, `key "FEATURE_X" in deployments.env is given twice: give it once`},
		{`"files":{"index.html":"9f86`, `"files":{"index.html":"60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752","index.html":"9f86`, `key "index.html" in deployments.files is given twice: give it once`},
		{`"env":{"FEATURE_X":"on"}`, `"env":{"FEATURE_X":"on"},"env":{}`, `key "env" in deployments is given twice: give it once`},
		{`"id":"dpl_first"`, `"id":"dpl_first","id":"dpl_first"`, `key "id" in deployments is given twice: give it once`},
		{`"id":"dpl_first"`, `"id":"dpl_first","timings":{"redy_at":null},"timings":{}`, `key "timings" in deployments is given twice: give it once`},
		{`"env":{"FEATURE_X":"on"}`, `"env":{"FEATURE_X":"on","F\u0045ATURE_X":"off"}`, `key "FEATURE_X" in deployments.env is given twice`},
	} {
		if !strings.Contains(doc, tc.old) {
			t.Fatalf("the state has no %s: %s", tc.old, doc)
		}
		changed := strings.Replace(doc, tc.old, tc.new, 1)
		r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: changed})
		if r.Status != http.StatusBadRequest || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
			t.Errorf("%s: %d %.200s, want 400 %q", tc.new, r.Status, r.Body, tc.want)
		}
	}
	r = e.get("/v1/deployments/dpl_first", "t-read")
	mustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"FEATURE_X":"on"`) {
		t.Fatalf("the world was changed by a refused import: %s", r.Body)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: doc}), http.StatusOK)
}

// One field of a state element given in two cases ("scope" and "SCOPE") is refused as
// the control API's bodies refuse it: encoding/json matches keys in any case and would
// keep the last, so the token would quietly be a read token.
func TestStateElementFieldInTwoCasesIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(req{Method: "POST", Path: "/_emulator/tokens", Body: `{"scope":"admin","SCOPE":"read"}`})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Err(t).Message, `keys "SCOPE" and "scope" both set "scope": give it once`) {
		t.Fatalf("the control API: %d %s", r.Status, r.Body)
	}
	r = e.get("/_emulator/state", "")
	mustStatus(t, r, http.StatusOK)
	doc := string(r.Body)
	for _, tc := range []struct{ doc, want string }{
		{`{"tokens":[{"token":"t-x","scope":"admin","SCOPE":"read"}]}`, `keys "SCOPE" and "scope" in tokens both set "scope": give it once`},
		{`{"tokens":[{"token":"t-x","Scope":"admin","sCOPE":"read"}]}`, `keys "Scope" and "sCOPE" in tokens both set "scope"`},
		{`{"projects":[{"id":"prj_x","name":"x","NAME":"y","created_at":"2026-11-01T00:00:00Z"}]}`, `keys "NAME" and "name" in projects both set "name"`},
		{`{"policy":{"domain_write_scope":"admin","Domain_Write_Scope":"deploy"}}`, `keys "Domain_Write_Scope" and "domain_write_scope" in policy both set "domain_write_scope"`},
		{strings.Replace(doc, `"id":"dpl_first"`, `"id":"dpl_first","ID":"dpl_other"`, 1), `keys "ID" and "id" in deployments both set "id"`},
		{strings.Replace(doc, `"tls":{"status":"issued"`, `"tls":{"status":"issued","Status":"pending"`, 1), `keys "Status" and "status" in domains.tls both set "status"`},
	} {
		r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: tc.doc})
		if r.Status != http.StatusBadRequest || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.want) {
			t.Errorf("%.80s: %d %.300s, want 400 %q", tc.doc, r.Status, r.Body, tc.want)
		}
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), http.StatusOK) // the world is the one before
}
