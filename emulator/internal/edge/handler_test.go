package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// site is a world with one deployment in each state, custom domains in each state, a
// wildcard and a detached domain, and a store holding all but one file.
type site struct {
	world *fakeWorld
	files *edge.FileStore
	h     *edge.Handler
	hosts map[string]string // deployment id → host
	hash  map[string]string // content → digest
}

const missingHash = "0000000000000000000000000000000000000000000000000000000000000000"

func newSite(tb testing.TB) *site {
	tb.Helper()
	s := &site{world: newFakeWorld(), files: edge.NewFileStore(0), hosts: map[string]string{}, hash: map[string]string{}}
	put := func(content string) string {
		s.hash[content] = mustPut(tb, s.files, content)
		return s.hash[content]
	}
	filesOf := func(id string) map[string]string {
		return map[string]string{
			"index.html":      put("<h1>" + id + " home</h1>"),
			"about.html":      put("<h1>" + id + " about</h1>"),
			"docs/index.html": put("<h1>" + id + " docs</h1>"),
			"app.js":          put("console.log('" + id + "')"),
			"style.css":       put("body{}/*" + id + "*/"),
			"data.json":       put(`{"id":"` + id + `"}`),
			"logo.SVG":        put("<svg>" + id + "</svg>"),
			"blob.unknownext": put("plain words " + id),
			"big.txt":         put(strings.Repeat("0123456789", 100)),
			"later.html":      missingHash,
		}
	}
	deps := []edge.Deployment{
		{ID: "dpl_ready1", Status: state.StatusReady, EverReady: true, Files: filesOf("dpl_ready1")},
		{ID: "dpl_ready2", Status: state.StatusReady, EverReady: true, Files: filesOf("dpl_ready2")},
		{ID: "dpl_queued", Status: state.StatusQueued, Files: filesOf("dpl_queued")},
		{ID: "dpl_building", Status: state.StatusBuilding, Files: filesOf("dpl_building")},
		{ID: "dpl_failed", Status: state.StatusError, Files: filesOf("dpl_failed")},
		{ID: "dpl_brokelater", Status: state.StatusError, EverReady: true, Files: filesOf("dpl_brokelater")},
		{ID: "dpl_wild", Status: state.StatusReady, EverReady: true, Files: filesOf("dpl_wild")},
	}
	byID := map[string]edge.Deployment{}
	for _, d := range deps {
		s.hosts[d.ID] = s.world.addDeployment("Demo Shop", d)
		byID[d.ID] = d
	}
	s.world.promote("shop", byID["dpl_ready1"])
	s.world.promote("wild", byID["dpl_wild"])
	s.world.domains = map[string]fakeDomain{
		"shop.example.test":      {status: state.StatusActive, project: "shop"},
		"www.example.test":       {status: state.StatusActive, project: "shop", redirectTo: "shop.example.test"},
		"pending.example.test":   {status: state.StatusPending, project: "shop"},
		"verifying.example.test": {status: state.StatusVerifying, project: "shop"},
		"broken.example.test":    {status: state.StatusError, project: "shop"},
		"new.example.test":       {status: state.StatusActive, project: "empty"},
		"gone.example.test":      {status: state.StatusActive, project: "shop", detached: true},
		// deleted, detachment not yet fired: the world still returns it as it was
		"leaving.example.test": {status: state.StatusActive, project: "shop"},
		"*.wild.test":          {status: state.StatusActive, project: "wild"},
		"exact.wild.test":      {status: state.StatusActive, project: "shop"},
		"gone.wild.test":       {status: state.StatusActive, project: "shop", detached: true},
		"*.go.test":            {status: state.StatusActive, project: "shop", redirectTo: "shop.example.test"},
		"*.notyet.test":        {status: state.StatusVerifying, project: "wild"},
	}
	s.h = newHandler(tb, s.world, s.files)
	return s
}

type edgeCase struct {
	name       string
	method     string
	host       string
	target     string
	header     []string
	status     int
	code       string // X-Hostemu-Error, "" for none
	deployment string // X-Hostemu-Deployment, "" for none
	body       string // substring of the body
}

// checkEdgeAnswer asserts what every edge answer carries, and what c expects.
func checkEdgeAnswer(t *testing.T, c edgeCase, w *httptest.ResponseRecorder) {
	t.Helper()
	h := w.Result().Header
	if w.Code != c.status {
		t.Errorf("status %d, want %d; body %q", w.Code, c.status, w.Body.String())
	}
	if got := h.Get("Server"); got != "hostemu" {
		t.Errorf("Server %q", got)
	}
	if got := h.Get("X-Hostemu-Error"); got != c.code {
		t.Errorf("X-Hostemu-Error %q, want %q", got, c.code)
	}
	if got := h.Get("X-Hostemu-Deployment"); got != c.deployment {
		t.Errorf("X-Hostemu-Deployment %q, want %q", got, c.deployment)
	}
	if !strings.Contains(w.Body.String(), c.body) {
		t.Errorf("body %q lacks %q", w.Body.String(), c.body)
	}
	for k := range h {
		if strings.HasPrefix(k, "X-Ratelimit-") || strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("edge answer carries %s", k)
		}
	}
}

// TestEdgeTable walks every row of the edge table in docs/edge-and-tls.md.
func TestEdgeTable(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	host := func(id string) string { return s.hosts[id] + ":4700" }
	cases := []edgeCase{
		{name: "deployment host, ready: its files", host: host("dpl_ready1"), target: "/",
			status: 200, deployment: "dpl_ready1", body: "<h1>dpl_ready1 home</h1>"},
		{name: "deployment host, error after ready: still served", host: host("dpl_brokelater"), target: "/about",
			status: 200, deployment: "dpl_brokelater", body: "<h1>dpl_brokelater about</h1>"},
		{name: "deployment host, queued", host: host("dpl_queued"), target: "/",
			status: 503, code: "deployment_building", deployment: "dpl_queued", body: "is queued"},
		{name: "deployment host, building", host: host("dpl_building"), target: "/about",
			status: 503, code: "deployment_building", deployment: "dpl_building", body: "is building"},
		{name: "deployment host, error before ready", host: host("dpl_failed"), target: "/",
			status: 502, code: "deployment_failed", deployment: "dpl_failed", body: "dpl_failed failed"},
		{name: "deployment host, no such deployment", host: "demo-shop-nope.hostemu.localhost", target: "/",
			status: 404, code: "deployment_not_found", body: "demo-shop-nope.hostemu.localhost"},
		{name: "deployment host, not a deployment's shape", host: "a.b.c.hostemu.localhost", target: "/",
			status: 404, code: "deployment_not_found"},
		{name: "deployment host, path not in files", host: host("dpl_ready1"), target: "/nope",
			status: 404, code: "not_found", deployment: "dpl_ready1"},
		{name: "custom domain, active: production", host: "shop.example.test", target: "/docs/",
			status: 200, deployment: "dpl_ready1", body: "<h1>dpl_ready1 docs</h1>"},
		{name: "custom domain, active, no production", host: "new.example.test", target: "/",
			status: 404, code: "no_production_deployment", body: "new.example.test"},
		{name: "custom domain, redirect_to", host: "www.example.test", target: "/a/b?x=1",
			status: 308},
		{name: "wildcard, active: single-label subdomain", host: "anything.wild.test", target: "/",
			status: 200, deployment: "dpl_wild", body: "dpl_wild home"},
		{name: "wildcard, exact domain attached wins", host: "exact.wild.test", target: "/",
			status: 200, deployment: "dpl_ready1", body: "dpl_ready1 home"},
		{name: "wildcard does not cover its apex", host: "wild.test", target: "/",
			status: 404, code: "unknown_host"},
		{name: "wildcard does not cover two labels", host: "a.b.wild.test", target: "/",
			status: 404, code: "unknown_host"},
		{name: "custom domain, pending", host: "pending.example.test", target: "/",
			status: 421, code: "domain_not_active"},
		{name: "custom domain, verifying", host: "verifying.example.test", target: "/",
			status: 421, code: "domain_not_active"},
		{name: "custom domain, error", host: "broken.example.test", target: "/",
			status: 421, code: "domain_not_active"},
		{name: "wildcard, not active", host: "x.notyet.test", target: "/",
			status: 421, code: "domain_not_active"},
		{name: "deleted domain within 5 s: still served", host: "leaving.example.test", target: "/",
			status: 200, deployment: "dpl_ready1", body: "dpl_ready1 home"},
		{name: "deleted domain after detachment", host: "gone.example.test", target: "/",
			status: 404, code: "unknown_host"},
		{name: "detached exact domain under a live wildcard: the wildcard serves", host: "gone.wild.test", target: "/",
			status: 200, deployment: "dpl_wild"},
		{name: "unknown host", host: "elsewhere.test", target: "/",
			status: 404, code: "unknown_host"},
		{name: "proxy request for an unknown host: refused", host: "127.0.0.1:4700", target: "http://example.com/",
			status: 403, code: "unknown_host", body: "never leave"},
		{name: "proxy request for a detached domain: refused", target: "http://gone.example.test/",
			status: 403, code: "unknown_host"},
		{name: "proxy request for a custom domain", host: "127.0.0.1:4700", target: "http://shop.example.test/about",
			status: 200, deployment: "dpl_ready1", body: "dpl_ready1 about"},
		{name: "proxy request for a deployment host", target: "http://" + s.hosts["dpl_ready2"] + "/",
			status: 200, deployment: "dpl_ready2", body: "dpl_ready2 home"},
		{name: "host with upper case, port and trailing dot", host: "SHOP.Example.Test.:8080", target: "/",
			status: 200, deployment: "dpl_ready1"},
		{name: "a literal wildcard host is no host", host: "*.wild.test", target: "/",
			status: 404, code: "unknown_host"},
		{name: "placeholder for a hash never uploaded", host: "shop.example.test", target: "/later",
			status: 200, deployment: "dpl_ready1", body: missingHash},
		{name: "POST to a file", method: "POST", host: "shop.example.test", target: "/",
			status: 405, code: "method_not_allowed", deployment: "dpl_ready1"},
		{name: "POST while building: still building", method: "POST", host: host("dpl_building"), target: "/",
			status: 503, code: "deployment_building", deployment: "dpl_building"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			method := c.method
			if method == "" {
				method = "GET"
			}
			w := do(t, s.h, method, c.host, c.target, c.header...)
			checkEdgeAnswer(t, c, w)
			if c.code == "deployment_building" && w.Header().Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q, want 1", w.Header().Get("Retry-After"))
			}
			if c.code != "deployment_building" && w.Header().Get("Retry-After") != "" {
				t.Errorf("Retry-After on %d", w.Code)
			}
		})
	}
}

func TestEdgeRedirect(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	cases := []struct{ method, host, target, want string }{
		{"GET", "www.example.test", "/", "https://shop.example.test/"},
		{"GET", "www.example.test", "/a/b?x=1&y=%20z", "https://shop.example.test/a/b?x=1&y=%20z"},
		{"GET", "www.example.test", "/a%2Fb/%7e?", "https://shop.example.test/a%2Fb/%7e"},
		{"GET", "www.example.test", "/caf%C3%A9?q=caf%C3%A9", "https://shop.example.test/caf%C3%A9?q=caf%C3%A9"},
		{"POST", "www.example.test", "/form?a=1", "https://shop.example.test/form?a=1"},
		{"GET", "127.0.0.1", "http://www.example.test/p?q", "https://shop.example.test/p?q"},
		{"GET", "127.0.0.1", "http://www.example.test", "https://shop.example.test/"},
		{"GET", "deep.go.test", "/x?y=1", "https://shop.example.test/x?y=1"},
	}
	for _, c := range cases {
		w := do(t, s.h, c.method, c.host, c.target)
		if w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != c.want {
			t.Errorf("%s %s%s: %d Location %q, want 308 %q", c.method, c.host, c.target, w.Code, w.Header().Get("Location"), c.want)
		}
		if w.Header().Get("Server") != "hostemu" || w.Header().Get("X-Hostemu-Deployment") != "" {
			t.Errorf("%s: headers %v", c.target, w.Header())
		}
	}
}

func TestEdgeFiles(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	host := "shop.example.test"
	cases := []struct{ target, contentType, body string }{
		{"/", "text/html; charset=utf-8", "<h1>dpl_ready1 home</h1>"},
		{"/about", "text/html; charset=utf-8", "<h1>dpl_ready1 about</h1>"},
		{"/app.js", "text/javascript; charset=utf-8", "console.log('dpl_ready1')"},
		{"/style.css", "text/css; charset=utf-8", "body{}/*dpl_ready1*/"},
		{"/data.json", "application/json", `{"id":"dpl_ready1"}`},
		{"/logo.SVG", "image/svg+xml", "<svg>dpl_ready1</svg>"},
		{"/blob.unknownext", "text/plain; charset=utf-8", "plain words dpl_ready1"}, // sniffed
	}
	for _, c := range cases {
		w := do(t, s.h, "GET", host, c.target)
		if w.Code != 200 || w.Body.String() != c.body {
			t.Errorf("%s: %d %q", c.target, w.Code, w.Body.String())
		}
		if got := w.Header().Get("Content-Type"); got != c.contentType {
			t.Errorf("%s: Content-Type %q, want %q", c.target, got, c.contentType)
		}
		if got, want := w.Header().Get("ETag"), `"`+s.hash[c.body]+`"`; got != want {
			t.Errorf("%s: ETag %q, want %q", c.target, got, want)
		}
		if w.Header().Get("X-Hostemu-Placeholder") != "" {
			t.Errorf("%s: marked a placeholder", c.target)
		}
	}
}

func TestEdgeConditionalRangeHead(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	host := "shop.example.test"
	big := strings.Repeat("0123456789", 100)
	etag := `"` + s.hash[big] + `"`

	if w := do(t, s.h, "GET", host, "/big.txt", "If-None-Match", etag); w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
		t.Errorf("If-None-Match: %d, %d bytes, ETag %q", w.Code, w.Body.Len(), w.Header().Get("ETag"))
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "If-None-Match", `"other", `+etag); w.Code != 304 {
		t.Errorf("If-None-Match list: %d", w.Code)
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "If-None-Match", `"other"`); w.Code != 200 || w.Body.String() != big {
		t.Errorf("If-None-Match other: %d", w.Code)
	}
	w := do(t, s.h, "GET", host, "/big.txt", "Range", "bytes=10-19")
	if w.Code != 206 || w.Body.String() != "0123456789" || w.Header().Get("Content-Range") != "bytes 10-19/1000" {
		t.Errorf("Range: %d %q %q", w.Code, w.Body.String(), w.Header().Get("Content-Range"))
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "Range", "bytes=995-"); w.Code != 206 || w.Body.String() != "56789" {
		t.Errorf("open Range: %d %q", w.Code, w.Body.String())
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "Range", "bytes=5000-"); w.Code != 416 {
		t.Errorf("unsatisfiable Range: %d", w.Code)
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "Range", "bytes=0-4", "If-Range", `"stale"`); w.Code != 200 || w.Body.Len() != 1000 {
		t.Errorf("If-Range stale: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := do(t, s.h, "GET", host, "/big.txt", "Range", "bytes=0-4", "If-Range", etag); w.Code != 206 || w.Body.String() != "01234" {
		t.Errorf("If-Range current: %d %q", w.Code, w.Body.String())
	}
	w = do(t, s.h, "HEAD", host, "/big.txt")
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "1000" || w.Header().Get("X-Hostemu-Deployment") != "dpl_ready1" {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
	w = do(t, s.h, "HEAD", "pending.example.test", "/")
	if w.Code != 421 || w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD of an error: %d, %d bytes", w.Code, w.Body.Len())
	}
}

func TestEdgePlaceholder(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	a := do(t, s.h, "GET", "shop.example.test", "/later")
	b := do(t, s.h, "GET", "shop.example.test", "/later.html")
	if a.Code != 200 || a.Header().Get("X-Hostemu-Placeholder") != "true" || a.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("placeholder: %d %v", a.Code, a.Header())
	}
	if a.Body.String() != b.Body.String() || a.Body.String() != string(edge.Placeholder("dpl_ready1", "later.html", missingHash)) {
		t.Fatal("placeholder not deterministic")
	}
	for _, want := range []string{"dpl_ready1", "later.html", missingHash} {
		if !strings.Contains(a.Body.String(), want) {
			t.Errorf("placeholder lacks %q", want)
		}
	}
	if a.Header().Get("ETag") != "" {
		t.Error("a placeholder claims the hash's ETag")
	}
	c := do(t, edge.New(edge.Options{Lookup: s.world}), "GET", "shop.example.test", "/")
	if c.Header().Get("X-Hostemu-Placeholder") != "true" {
		t.Error("a handler without a store did not serve placeholders")
	}
}

func TestEdgeErrorFormats(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for _, accept := range []string{"application/json", "application/json, text/plain, */*"} {
		w := do(t, s.h, "GET", "pending.example.test", "/", "Accept", accept)
		var env struct {
			Error struct{ Code, Message, DocURL string }
		}
		raw := w.Body.String()
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("Accept %q: %v %q", accept, err, raw)
		}
		var generic map[string]map[string]any
		json.Unmarshal(w.Body.Bytes(), &generic)
		if generic["error"]["code"] != "domain_not_active" || generic["error"]["doc_url"] != docsBase+"/docs/errors/domain_not_active" ||
			!strings.Contains(generic["error"]["message"].(string), "pending.example.test") || len(generic["error"]) != 3 {
			t.Errorf("Accept %q: envelope %q", accept, raw)
		}
	}
	for _, accept := range []string{"", "*/*", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"} {
		w := do(t, s.h, "GET", "pending.example.test", "/", "Accept", accept)
		body := w.Body.String()
		if w.Header().Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(body, "<!doctype html>") ||
			!strings.Contains(body, "421 domain_not_active") || !strings.Contains(body, docsBase+"/docs/errors/domain_not_active") {
			t.Errorf("Accept %q: %q", accept, body)
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("an error page may be cached")
		}
	}
	// Without DocsBase doc_url is a path on the same listener; HTML escapes the host.
	h := edge.New(edge.Options{Lookup: s.world})
	w := do(t, h, "GET", "", "http://a<b>.test/", "Accept", "application/json")
	if !strings.Contains(w.Body.String(), `"doc_url":"/docs/errors/unknown_host"`) {
		t.Errorf("relative doc_url: %q", w.Body.String())
	}
	w = do(t, h, "GET", "", "http://a<b>.test/")
	if strings.Contains(w.Body.String(), "<b>") {
		t.Errorf("unescaped host in the page: %q", w.Body.String())
	}
}

// TestEdgeNamespaceLabel: the lookup is asked with the namespace label of the host.
func TestEdgeNamespaceLabel(t *testing.T) {
	t.Parallel()
	w := newFakeWorld()
	dep := edge.Deployment{ID: "dpl_n1", Status: state.StatusReady, EverReady: true, Files: map[string]string{"index.html": missingHash}}
	w.deployments[edge.EdgeName{Label: "shop-n1", Namespace: "k3f9"}] = dep
	h := edge.New(edge.Options{Lookup: w, EdgeDomain: "Edge.Test"})
	if r := do(t, h, "GET", "shop-n1.k3f9.edge.test", "/"); r.Code != 200 || r.Header().Get("X-Hostemu-Deployment") != "dpl_n1" {
		t.Errorf("namespaced host: %d", r.Code)
	}
	if r := do(t, h, "GET", "shop-n1.edge.test", "/"); r.Code != 404 || r.Header().Get("X-Hostemu-Error") != "deployment_not_found" {
		t.Errorf("default namespace asked for another's deployment: %d", r.Code)
	}
	if h.EdgeDomain() != "edge.test" {
		t.Errorf("EdgeDomain %q", h.EdgeDomain())
	}
}

// TestDecideClaims: what a router learns before giving a request to the APIs.
func TestDecideClaims(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	cases := []struct {
		host    string
		proxy   bool
		claimed bool
		kind    string
	}{
		{"localhost", false, false, ""},
		{"127.0.0.1", false, false, ""},
		{"hostemu.localhost", false, false, ""},
		{"elsewhere.test", false, false, ""},
		{"elsewhere.test", true, true, ""},
		{"demo-shop-nope.hostemu.localhost", false, true, edge.KindDeployment},
		{s.hosts["dpl_ready1"], false, true, edge.KindDeployment},
		{"shop.example.test", false, true, edge.KindDomain},
		{"www.example.test", false, true, edge.KindRedirect},
		{"pending.example.test", false, true, edge.KindDomain},
		{"gone.example.test", false, true, ""},
		{"x.wild.test", false, true, edge.KindDomain},
	}
	for _, c := range cases {
		d := edge.Decide(c.host, c.proxy, s.world, edge.DefaultEdgeDomain)
		if d.Claimed != c.claimed || d.Kind != c.kind {
			t.Errorf("Decide(%q, proxy %v): claimed %v kind %q; want %v %q", c.host, c.proxy, d.Claimed, d.Kind, c.claimed, c.kind)
		}
	}
	if d := edge.Decide("x.wild.test", false, s.world, edge.DefaultEdgeDomain); d.Domain != "*.wild.test" || d.Deployment.ID != "dpl_wild" {
		t.Errorf("wildcard decision %+v", d)
	}
}
