package emulator_test

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// nsCreated is the answer to POST /_emulator/namespaces.
type nsCreated struct {
	Namespace string `json:"namespace"`
	Tokens    struct {
		Read, Deploy, Admin string
	} `json:"tokens"`
	CipherKey  string `json:"cipher_key"`
	ControlURL string `json:"control_url"`
}

// newNamespace creates a namespace with body (nil for the defaults).
func (e *env) newNamespace(t testing.TB, body any) nsCreated {
	t.Helper()
	r := e.post("/_emulator/namespaces", "", body)
	mustStatus(t, r, 201)
	return decode[nsCreated](t, r)
}

func (n nsCreated) control(path string) string { return "/_emulator/namespaces/" + n.Namespace + path }

func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.newNamespace(t, nil)
	if !strings.HasPrefix(n.Namespace, "ns_") || n.Tokens.Read == "" || n.Tokens.Deploy == "" || n.Tokens.Admin == "" || n.CipherKey == "" {
		t.Fatalf("created: %+v", n)
	}
	if want := e.url + n.control(""); n.ControlURL != want {
		t.Errorf("control_url = %q, want %q", n.ControlURL, want)
	}
	// its tokens work, the default world's fixtures are its own, and the default
	// tokens keep reaching the default world
	mustStatus(t, e.get("/v1/deployments/dpl_first", n.Tokens.Read), 200)
	mustStatus(t, e.get("/v1/deployments/dpl_first", "t-read"), 200)
	if r := e.get("/v1/projects", "t-read"); r.Status != 200 {
		t.Fatalf("default token: %d", r.Status)
	}
	// a scope is a scope
	if r := e.post("/v1/deployments", n.Tokens.Read, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}); r.Status != 403 {
		t.Errorf("read token creating: %d", r.Status)
	}
	// listed
	type listed struct {
		Namespaces []struct {
			Namespace, Scenario, Clock string
			CreatedAt                  time.Time `json:"created_at"`
			LastUsedAt                 time.Time `json:"last_used_at"`
		} `json:"namespaces"`
	}
	list := decode[listed](t, e.get("/_emulator/namespaces", ""))
	if len(list.Namespaces) != 1 || list.Namespaces[0].Namespace != n.Namespace || list.Namespaces[0].Scenario != "default" || list.Namespaces[0].Clock != "manual" {
		t.Errorf("list: %+v", list)
	}
	// a minted token belongs to its namespace
	mint := e.post(n.control("/tokens"), "", map[string]string{"scope": "deploy"})
	mustStatus(t, mint, 201)
	minted := decode[emulator.Token](t, mint)
	if r := e.post("/v1/deployments", minted.Token, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}); r.Status != 201 {
		t.Fatalf("minted token: %d %s", r.Status, r.Body)
	}
	if r := e.get(n.control("/requests"), ""); !strings.Contains(string(r.Body), `"POST"`) {
		t.Errorf("the namespace's journal lacks its request: %s", r.Body)
	}
	if r := e.get("/_emulator/requests?method=POST", ""); strings.Contains(string(r.Body), `"POST"`) {
		t.Errorf("the default journal has the namespace's request: %s", r.Body)
	}
	// deleted: tokens stop at once, control routes are 404
	mustStatus(t, e.do(req{Method: "DELETE", Path: n.control("")}), 200)
	for _, tok := range []string{n.Tokens.Read, minted.Token} {
		if r := e.get("/v1/projects", tok); r.Status != 401 || r.Code() != "invalid_token" {
			t.Errorf("token after delete: %d %s", r.Status, r.Body)
		}
	}
	if r := e.get(n.control("/clock"), ""); r.Status != 404 || r.Code() != "namespace_not_found" {
		t.Errorf("control after delete: %d %s", r.Status, r.Body)
	}
	if r := e.do(req{Method: "DELETE", Path: n.control("")}); r.Status != 404 || r.Code() != "namespace_not_found" {
		t.Errorf("second delete: %d %s", r.Status, r.Body)
	}
	if r := e.get("/v1/projects", "ns_nosuchlabel_read_x"); r.Status != 401 || r.Code() != "invalid_token" {
		t.Errorf("unknown namespace token: %d %s", r.Status, r.Body)
	}
}

func TestNamespaceCreateOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		body any
		code string
	}{
		{"unknown scenario", map[string]any{"scenario": "nope"}, "scenario_not_found"},
		{"bad clock", map[string]any{"clock": "sundial"}, "invalid_request"},
		{"bad clock start", map[string]any{"clock_start": "yesterday"}, "invalid_request"},
		{"bad fixtures", map[string]any{"fixtures": map[string]any{"projects": "many"}}, "invalid_request"},
	} {
		if r := e.post("/_emulator/namespaces", "", tc.body); r.Code() != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	n := e.newNamespace(t, map[string]any{
		"scenario": "instant", "clock": "manual", "clock_start": "2030-05-01T00:00:00Z", "seed": 9,
		"fixtures": map[string]any{"projects": []any{map[string]any{"id": "prj_x", "name": "xray", "created_at": "2030-01-01T00:00:00Z"}}},
	})
	if r := e.get(n.control("/clock"), ""); !strings.Contains(string(r.Body), "2030-05-01T00:00:00") {
		t.Errorf("clock: %s", r.Body)
	}
	if r := e.get(n.control("/scenarios"), ""); !strings.Contains(string(r.Body), `"active":"instant"`) {
		t.Errorf("scenario: %s", r.Body)
	}
	r := e.get("/v1/projects", n.Tokens.Read)
	if !strings.Contains(string(r.Body), "prj_x") || strings.Contains(string(r.Body), "prj_shop") {
		t.Errorf("projects of inline fixtures: %s", r.Body)
	}
}

// Two namespaces with the same seed hold the same world, and make the same ids;
// their deployment hosts carry their labels, and the edge serves each its own.
func TestNamespacesSameSeedSameWorld(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.newNamespace(t, map[string]any{"seed": 3}), e.newNamespace(t, map[string]any{"seed": 3})
	ia, ib := e.get("/v1/deployments?limit=100", a.Tokens.Read), e.get("/v1/deployments?limit=100", b.Tokens.Read)
	la, lb := strings.TrimPrefix(a.Namespace, "ns_"), strings.TrimPrefix(b.Namespace, "ns_")
	if strings.ReplaceAll(string(ia.Body), la, "NS") != strings.ReplaceAll(string(ib.Body), lb, "NS") {
		t.Errorf("same seed, different worlds:\n%s\n%s", ia.Body, ib.Body)
	}
	var ids [2]emulator.DeploymentCreated
	var hosts [2]string
	for i, n := range []nsCreated{a, b} {
		r := e.post("/v1/deployments", n.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digestOf("x")}})
		mustStatus(t, r, 201)
		ids[i] = decode[emulator.DeploymentCreated](t, r)
		hosts[i] = host(t, ids[i].URL)
		if want := "." + strings.TrimPrefix(n.Namespace, "ns_") + ".hostemu.localhost"; !strings.HasSuffix(hosts[i], want) {
			t.Errorf("deployment host %q lacks %q", hosts[i], want)
		}
	}
	if ids[0].ID != ids[1].ID {
		t.Errorf("same seed, ids %s and %s", ids[0].ID, ids[1].ID)
	}
	// each edge host reaches its own namespace: ready in a, still queued in b
	e.post(a.control("/clock/advance"), "", map[string]string{"by": "1m"})
	if r := e.edgeGet(hosts[0], "/", nil); r.Status != 200 || r.Header.Get("X-Hostemu-Deployment") != ids[0].ID {
		t.Errorf("edge in a: %d %v", r.Status, r.Header)
	}
	if r := e.edgeGet(hosts[1], "/", nil); r.Status != 503 || edgeCode(r) != "deployment_building" {
		t.Errorf("edge in b: %d %v", r.Status, r.Header)
	}
	// another namespace's label in a host: no such deployment there
	swapped := strings.Replace(hosts[0], la, lb, 1)
	if r := e.edgeGet(swapped, "/", nil); r.Status != 503 {
		t.Errorf("b's host of a's id: %d %s", r.Status, edgeCode(r))
	}
	// custom domains are per namespace: chosen by header or proxy credentials
	for _, n := range []nsCreated{a, b} {
		mustStatus(t, e.post("/v1/projects/prj_shop/domains", n.Tokens.Admin, map[string]any{"hostname": "ns.example.test"}), 201)
	}
	e.post(a.control("/domains/ns.example.test/status"), "", map[string]string{"status": "active"})
	if r := e.edgeGet("ns.example.test", "/", map[string]string{"X-Hostemu-Namespace": a.Namespace}); r.Status != 200 {
		t.Errorf("domain in a by header: %d %s", r.Status, edgeCode(r))
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(b.Namespace+":"))
	if r := e.edgeGet("ns.example.test", "/", map[string]string{"Proxy-Authorization": basic}); r.Status != 421 {
		t.Errorf("domain in b by proxy credentials: %d %s", r.Status, edgeCode(r))
	}
	if r := e.get("/_emulator/edge", ""); strings.Contains(string(r.Body), "ns.example.test") {
		t.Errorf("the default world routes a namespace's domain: %s", r.Body)
	}
}

// The limit: 429 namespace_limit beyond --max-namespaces; a deleted one frees a place.
// Expiry: unused for the TTL on the registry's clock, a namespace is gone.
func TestNamespaceLimitAndExpiry(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clockNow := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	pass := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newEnv(t, func(o *emulator.Options) {
		o.MaxNamespaces, o.NamespaceTTL = 2, 10*time.Minute
		emulator.SetNamespaceClock(o, clockNow)
	})
	a, b := e.newNamespace(t, nil), e.newNamespace(t, nil)
	if r := e.post("/_emulator/namespaces", "", nil); r.Status != 429 || r.Code() != "namespace_limit" {
		t.Fatalf("third namespace: %d %s", r.Status, r.Body)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: b.control("")}), 200)
	c := e.newNamespace(t, nil)

	pass(6 * time.Minute)
	mustStatus(t, e.get("/v1/projects", a.Tokens.Read), 200) // a is used: its TTL starts again
	pass(6 * time.Minute)
	if r := e.get("/v1/projects", c.Tokens.Read); r.Status != 401 {
		t.Errorf("c after 12 min unused: %d", r.Status)
	}
	if r := e.get(c.control("/clock"), ""); r.Code() != "namespace_not_found" {
		t.Errorf("c's control after expiry: %d %s", r.Status, r.Body)
	}
	mustStatus(t, e.get(a.control("/clock"), ""), 200) // a control call is a use too
	pass(9 * time.Minute)
	mustStatus(t, e.get("/v1/projects", a.Tokens.Read), 200)
	list := e.get("/_emulator/namespaces", "")
	if !strings.Contains(string(list.Body), a.Namespace) || strings.Contains(string(list.Body), c.Namespace) {
		t.Errorf("list: %s", list.Body)
	}
	pass(10 * time.Minute)
	e.newNamespace(t, nil) // a has expired and frees its place
	if r := e.post("/_emulator/namespaces", "", nil); r.Status != 201 {
		t.Errorf("second after expiry: %d %s", r.Status, r.Body)
	}
}

// The journal keeps request headers but never credentials; a rate_limit fault may set
// its Retry-After.
func TestJournalHeadersAndRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Idempotency-Key": "idem-1", "User-Agent": "my-sdk/2"}})
	rs := decode[struct{ Requests []emulator.JournalEntry }](t, e.get("/_emulator/requests", ""))
	if len(rs.Requests) != 1 {
		t.Fatalf("journal: %+v", rs)
	}
	h := rs.Requests[0].Headers
	if h.Get("Idempotency-Key") != "idem-1" || h.Get("User-Agent") != "my-sdk/2" || h.Get("Authorization") != "[redacted]" {
		t.Errorf("headers: %v", h)
	}
	if r := e.get("/_emulator/requests", ""); strings.Contains(string(r.Body), "t-read") {
		t.Errorf("the token is in the journal: %s", r.Body)
	}
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"rate_limit": true, "retry_after": 42}), 201)
	r := e.get("/v1/projects", "t-read")
	if r.Status != 429 || r.Header.Get("Retry-After") != "42" {
		t.Errorf("rate_limit fault: %d Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	if r := e.post("/_emulator/faults", "", map[string]any{"status": 503, "retry_after": 5}); r.Code() != "invalid_request" {
		t.Errorf("retry_after without rate_limit: %d %s", r.Status, r.Body)
	}
}

// Namespaces share one file-store budget (--file-store-size), so many namespaces cannot
// hold many times the bound; and inline fixtures cannot generate a huge world.
func TestNamespacesShareTheFileBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.FileStoreSize = 100 })
	upload := func(token, content string) int {
		return e.do(req{Method: "POST", Path: "/v1/files", Token: token, Body: []byte(content),
			Headers: map[string]string{"X-File-Digest": digestOf(content), "Content-Type": "application/octet-stream"}}).Status
	}
	var tokens, ids []string
	for i := 0; i < 3; i++ {
		r := e.post("/_emulator/namespaces", "", map[string]any{})
		mustStatus(t, r, 201)
		var ns struct {
			Namespace string
			Tokens    struct{ Deploy string }
		}
		jsonUnmarshal(r.Body, &ns)
		tokens, ids = append(tokens, ns.Tokens.Deploy), append(ids, ns.Namespace)
	}
	if s := upload(tokens[0], strings.Repeat("a", 60)); s != 201 {
		t.Fatalf("first upload: %d", s)
	}
	if s := upload(tokens[1], strings.Repeat("b", 60)); s != 507 {
		t.Fatalf("a second namespace went past the shared budget: %d", s)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + ids[0]}), 200)
	if s := upload(tokens[1], strings.Repeat("b", 60)); s != 201 {
		t.Fatalf("a deleted namespace kept its bytes of the budget: %d", s)
	}
	r := e.post("/_emulator/namespaces", "", map[string]any{"fixtures": map[string]any{"generate": map[string]int{"projects": 1000, "deployments_per_project": 1000}}})
	if r.Status != 400 || r.Code() != "invalid_request" {
		t.Fatalf("a huge generated namespace: %d %s", r.Status, r.Body)
	}
}

// The dashboard's control routes act on the namespace they are called under: its
// tokens, its projects, its clock's next transition, its event stream.
func TestNamespacedDashboardRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/_emulator/namespaces", "", map[string]any{"clock": "manual"})
	mustStatus(t, r, 201)
	var ns struct {
		Namespace string
		Tokens    struct{ Deploy, Read string }
	}
	jsonUnmarshal(r.Body, &ns)
	base := "/_emulator/namespaces/" + ns.Namespace
	if body := string(e.get(base+"/tokens", "").Body); !strings.Contains(body, ns.Tokens.Read) || strings.Contains(body, "t-read") {
		t.Errorf("namespace tokens: %s", body)
	}
	defaultNow := string(e.get("/_emulator/clock", "").Body)
	mustStatus(t, e.post("/v1/deployments", ns.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	mustStatus(t, e.post(base+"/clock/next", "", nil), 200)
	if now := string(e.get("/_emulator/clock", "").Body); now != defaultNow {
		t.Errorf("the default clock moved: %s then %s", defaultNow, now)
	}
	if body := string(e.get(base+"/projects", "").Body); !strings.Contains(body, `"building"`) && !strings.Contains(body, `"status":"building"`) {
		t.Errorf("the namespace's deployment did not move to building: %.400s", body)
	}
}

// With --public-url naming another host, the emulator's own origin (the URL the page
// was opened at) may still drive the control API.
func TestOwnOriginWithPublicURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.PublicURL = "http://hostemu.internal:4700" })
	for _, origin := range []string{e.url, "http://hostemu.internal:4700"} {
		if r := e.do(req{Method: "POST", Path: "/_emulator/tokens", Body: map[string]string{"scope": "read"}, Headers: map[string]string{"Origin": origin}}); r.Status != 201 {
			t.Errorf("origin %s: %d %s", origin, r.Status, r.Body)
		}
	}
	if r := e.do(req{Method: "POST", Path: "/_emulator/tokens", Body: map[string]string{"scope": "read"}, Headers: map[string]string{"Origin": "http://evil.example"}}); r.Status != 403 {
		t.Errorf("a foreign origin: %d", r.Status)
	}
}
