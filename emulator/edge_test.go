package emulator_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func digestOf(b string) string { return digest([]byte(b)) }

// upload sends a file with POST /v1/files and returns its digest.
func (e *env) upload(t *testing.T, content string) string {
	t.Helper()
	h := digestOf(content)
	r := e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: []byte(content),
		Headers: map[string]string{"X-File-Digest": h, "Content-Type": "application/octet-stream"}})
	mustStatus(t, r, 201)
	return h
}

// host is the host of a URL the API handed out.
// readySite creates a deployment of prj_shop serving content as index.html, waits
// until it is ready, and returns the host the edge serves it at.
func (e *env) readySite(t *testing.T, content string) string {
	t.Helper()
	created := decode[struct{ ID, URL string }](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop",
		"files": map[string]string{"index.html": e.upload(t, content)}}))
	e.post("/_emulator/await", "", map[string]string{"deployment": created.ID, "status": "ready"})
	return host(t, created.URL)
}

func host(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// edgeGet requests path at a host of the edge.
func (e *env) edgeGet(host, path string, headers map[string]string) resp {
	return e.do(req{Method: "GET", Path: path, Host: host, Headers: headers})
}

func edgeCode(r resp) string { return r.Header.Get("X-Hostemu-Error") }

// A deployment is served at its URL's host: building, then its files, with the path
// mapping, conditional and range requests, HEAD, and a placeholder for what was never
// uploaded.
func TestEdgeServesADeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	index, about := "<h1>Hello</h1>", "<p>about us</p>"
	hi, ha := e.upload(t, index), e.upload(t, about)
	missing := digestOf("never uploaded")
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop",
		"files": map[string]string{"index.html": hi, "about.html": ha, "docs/index.html": hi, "app.js": missing}})
	mustStatus(t, r, 201)
	created := decode[emulator.DeploymentCreated](t, r)
	h := host(t, created.URL)
	if !strings.HasSuffix(h, ".hostemu.localhost") || !strings.HasPrefix(created.URL, "https://shop-") {
		t.Fatalf("url %s", created.URL)
	}

	b := e.edgeGet(h, "/", nil)
	if b.Status != 503 || edgeCode(b) != "deployment_building" || b.Header.Get("Retry-After") != "1" || b.Header.Get("X-Hostemu-Deployment") != created.ID {
		t.Fatalf("while queued: %d %v", b.Status, b.Header)
	}
	e.advance("6s")
	for _, tc := range []struct {
		path, body string
		status     int
		ctype      string
	}{
		{"/", index, 200, "text/html; charset=utf-8"},
		{"/index.html", index, 200, "text/html; charset=utf-8"},
		{"/about", about, 200, "text/html; charset=utf-8"},
		{"/docs/", index, 200, "text/html; charset=utf-8"},
		{"/docs", index, 200, "text/html; charset=utf-8"},
		{"/nope", "", 404, ""},
		{"/../index.html", "", 404, ""},
	} {
		r := e.edgeGet(h, tc.path, nil)
		if r.Status != tc.status || (tc.body != "" && string(r.Body) != tc.body) || r.Header.Get("X-Hostemu-Deployment") != created.ID || r.Header.Get("Server") != "hostemu" {
			t.Errorf("GET %s: %d %q %v", tc.path, r.Status, r.Body, r.Header)
		}
		if tc.ctype != "" && r.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s: Content-Type %q", tc.path, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET %s: edge answer with API headers %v", tc.path, r.Header)
		}
	}
	ok := e.edgeGet(h, "/", nil)
	if etag := ok.Header.Get("ETag"); etag != `"`+hi+`"` {
		t.Fatalf("ETag %q", etag)
	}
	if r := e.edgeGet(h, "/", map[string]string{"If-None-Match": `"` + hi + `"`}); r.Status != 304 {
		t.Errorf("If-None-Match: %d", r.Status)
	}
	if r := e.edgeGet(h, "/", map[string]string{"Range": "bytes=4-8"}); r.Status != 206 || string(r.Body) != index[4:9] {
		t.Errorf("Range: %d %q", r.Status, r.Body)
	}
	// a few ranges are served as ranges; many tiny ones (a 600 KB request asking for a
	// multipart answer 13 times the file) get the whole file, once
	if r := e.edgeGet(h, "/", map[string]string{"Range": "bytes=0-1,4-5"}); r.Status != 206 || !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/byteranges") {
		t.Errorf("two ranges: %d %v", r.Status, r.Header)
	}
	if r := e.do(req{Method: "HEAD", Path: "/", Host: h}); r.Status != 200 || len(r.Body) != 0 || r.Header.Get("Content-Length") != fmt.Sprint(len(index)) {
		t.Errorf("HEAD: %d %q %v", r.Status, r.Body, r.Header)
	}
	p := e.edgeGet(h, "/app.js", nil)
	if p.Status != 200 || p.Header.Get("X-Hostemu-Placeholder") != "true" || !strings.Contains(string(p.Body), created.ID) || !strings.Contains(string(p.Body), missing) {
		t.Errorf("placeholder: %d %v %s", p.Status, p.Header, p.Body)
	}
	// a build that failed before it was ready, and a host naming no deployment
	if r := e.edgeGet(strings.Replace(h, created.ID[4:], "broken", 1), "/", nil); r.Status != 502 || edgeCode(r) != "deployment_failed" {
		t.Errorf("failed deployment: %d %v", r.Status, r.Header)
	}
	if r := e.edgeGet("shop-nosuchdeployment.hostemu.localhost", "/", map[string]string{"Accept": "application/json"}); r.Status != 404 || r.Code() != "deployment_not_found" {
		t.Errorf("unknown deployment host: %d %s", r.Status, r.Body)
	}
	// an error after ready keeps being served
	mustStatus(t, e.post("/_emulator/deployments/"+created.ID+"/status", "", map[string]string{"status": "error"}), 200)
	if r := e.edgeGet(h, "/", nil); r.Status != 200 || string(r.Body) != index {
		t.Errorf("error after ready: %d", r.Status)
	}
}

// Custom domains: an active one serves its project's production deployment, a
// redirect answers 308 with path and query, one not yet active is 421, a wildcard
// covers single-label subdomains unless an exact domain is attached, and a project with
// no production deployment is 404 no_production_deployment.
func TestEdgeCustomDomains(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.edgeGet("shop.test", "/", nil)
	if r.Status != 200 || r.Header.Get("X-Hostemu-Deployment") != "dpl_first" || r.Header.Get("X-Hostemu-Placeholder") != "true" {
		t.Fatalf("active domain: %d %v", r.Status, r.Header)
	}
	if r := e.edgeGet("WWW.Shop.Test:4700", "/a/b%20c?x=1&y=%2F", nil); r.Status != 308 || r.Header.Get("Location") != "https://shop.test/a/b%20c?x=1&y=%2F" {
		t.Errorf("redirect: %d %v", r.Status, r.Header)
	}
	if r := e.edgeGet("www.shop.test", "/", nil); r.Header.Get("Location") != "https://shop.test/" {
		t.Errorf("redirect without a query: %v", r.Header.Get("Location"))
	}
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "*.blog.test"}), 201)
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]string{"hostname": "exact.blog.test"}), 201)
	if r := e.edgeGet("news.blog.test", "/", map[string]string{"Accept": "application/json"}); r.Status != 421 || r.Code() != "domain_not_active" {
		t.Errorf("pending domain: %d %s", r.Status, r.Body)
	}
	e.advance("12s")
	for _, tc := range []struct {
		host, code string
		status     int
	}{
		{"news.blog.test", "no_production_deployment", 404}, // the wildcard's project has none
		{"blog.test", "", 0},         // the apex is not covered: the APIs answer
		{"a.b.blog.test", "", 0},     // nor two labels
		{"exact.blog.test", "", 200}, // an exact domain wins over the wildcard
	} {
		r := e.edgeGet(tc.host, "/", nil)
		switch {
		// "/" off the edge is the landing page, which refuses a foreign host while hostemu
		// listens on loopback (forbidden_host): either way the APIs answered
		case tc.status == 0 && (r.Header.Get("Server") == "hostemu" || r.Code() != "not_found" && r.Code() != "forbidden_host"):
			t.Errorf("%s: answered by the edge: %d %v", tc.host, r.Status, r.Header)
		case tc.status != 0 && (r.Status != tc.status || edgeCode(r) != tc.code):
			t.Errorf("%s: %d %q", tc.host, r.Status, edgeCode(r))
		}
	}
}

// A deleted domain keeps being served until its detachment fires 5 s later on the
// emulator clock, then answers 404 unknown_host; an await can wait for either.
func TestEdgeDetachment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_shop/domains/shop.test", Token: "t-admin"}), 200)
	e.advance("4999ms")
	if r := e.edgeGet("shop.test", "/", nil); r.Status != 200 || r.Header.Get("X-Hostemu-Deployment") != "dpl_first" {
		t.Fatalf("at 4.999 s: %d %v", r.Status, r.Header)
	}
	e.advance("1ms")
	if r := e.edgeGet("shop.test", "/", nil); r.Status != 404 || edgeCode(r) != "unknown_host" {
		t.Fatalf("at 5 s: %d %v", r.Status, r.Header)
	}
	// the same with an await instead of counting
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_shop/domains/www.shop.test", Token: "t-admin"}), 200)
	a := e.post("/_emulator/await", "", map[string]string{"edge": "www.shop.test", "code": "unknown_host"})
	mustStatus(t, a, 200)
	if now := decode[struct{ Now emulator.Timestamp }](t, a).Now; time.Time(now).Sub(testStart) != 10*time.Second {
		t.Errorf("detached at %v", time.Time(now))
	}
}

// A request may ask for at most 16 byte ranges: with more, the whole file is served
// (200), so 50,000 one-byte ranges in a 600 KB request cannot make a multipart answer
// many times the file's size.
func TestEdgeRangeCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := strings.Repeat("0123456789", 10)
	h := e.readySite(t, content)
	ranges := func(n int) string {
		rs := make([]string, n)
		for i := range rs {
			rs[i] = fmt.Sprintf("%d-%d", 2*i, 2*i)
		}
		return "bytes=" + strings.Join(rs, ",")
	}
	if r := e.edgeGet(h, "/", map[string]string{"Range": ranges(16)}); r.Status != 206 || !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/byteranges") {
		t.Errorf("16 ranges: %d %v", r.Status, r.Header)
	}
	if r := e.edgeGet(h, "/", map[string]string{"Range": ranges(17)}); r.Status != 200 || string(r.Body) != content {
		t.Errorf("17 ranges: %d, %d bytes", r.Status, len(r.Body))
	}
}

// A host a wildcard domain served stays the edge's once the wildcard is deleted and
// detached (a tombstone, as an exact domain leaves): it answers 404 unknown_host, and is
// never handed to the APIs, where a page it served would share their origin.
func TestEdgeWildcardTombstone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "*.wild.test"}), 201)
	mustStatus(t, e.post("/_emulator/domains/*.wild.test/status", "", map[string]any{"status": "active"}), 200)
	if r := e.edgeGet("x.wild.test", "/", nil); r.Status != 200 || r.Header.Get("X-Hostemu-Deployment") != "dpl_first" {
		t.Fatalf("served by the wildcard: %d %v", r.Status, r.Header)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_shop/domains/*.wild.test", Token: "t-admin"}), 200)
	e.advance("5s")
	for _, path := range []string{"/", "/_emulator/state", "/v1/projects"} {
		if r := e.edgeGet("x.wild.test", path, nil); r.Status != 404 || edgeCode(r) != "unknown_host" || r.Header.Get("Server") != "hostemu" {
			t.Errorf("%s on x.wild.test after detachment: %d %v %s", path, r.Status, r.Header, r.Body)
		}
	}
}

// A promote is one pointer swap: readers of a custom domain see, request after
// request, whole answers of one deployment or the other, never an error or a mix.
func TestEdgePromoteUnderLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var served atomic.Int64
	errs := make(chan string, 64)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				hr, _ := http.NewRequest("GET", e.url+"/", nil)
				hr.Host = "shop.test"
				res, err := client.Do(hr)
				if err != nil {
					errs <- err.Error()
					return
				}
				buf := make([]byte, 4096)
				n, _ := res.Body.Read(buf)
				res.Body.Close()
				id := res.Header.Get("X-Hostemu-Deployment")
				if res.StatusCode != 200 || !strings.Contains(string(buf[:n]), "<code>"+id+"</code>") || (id != "dpl_first" && id != "dpl_second") {
					errs <- fmt.Sprintf("%d from %s: %.80s", res.StatusCode, id, buf[:n])
					return
				}
				served.Add(1)
			}
		}()
	}
	for i := 0; i < 300; i++ {
		id := []string{"dpl_second", "dpl_first"}[i%2]
		mustStatus(t, e.post("/v1/deployments/"+id+"/promote", "t-deploy", nil), 200)
		a := e.post("/_emulator/await", "", map[string]any{"edge": "shop.test", "deployment": id, "timeout": "1s"})
		mustStatus(t, a, 200)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if served.Load() == 0 {
		t.Fatal("no request was served")
	}
}

// hostemu is a proxy for the hosts it emulates: an absolute-form request for one is
// served; for any other host it is refused with 403 unknown_host and never leaves.
func TestEdgeProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proxied := func(target string) (*http.Response, string) {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(e.url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		u, _ := url.Parse(target)
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\nConnection: close\r\n\r\n", target, u.Host)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8192)
		n, _ := res.Body.Read(buf)
		return res, string(buf[:n])
	}
	if res, _ := proxied("http://shop.test/"); res.StatusCode != 200 || res.Header.Get("X-Hostemu-Deployment") != "dpl_first" {
		t.Errorf("proxy to an emulated domain: %d %v", res.StatusCode, res.Header)
	}
	// hostemu's own addresses through the proxy reach its APIs
	if res, _ := proxied(e.url + "/_emulator/health"); res.StatusCode != 200 {
		t.Errorf("proxy to hostemu itself: %d", res.StatusCode)
	}
	for _, target := range []string{"http://example.com/", "http://shop.test.evil.example/x", "http://10.0.0.1/v1/projects", "http://8.8.8.8/"} {
		res, body := proxied(target)
		if res.StatusCode != 403 || res.Header.Get("X-Hostemu-Error") != "unknown_host" || !strings.Contains(body, "never leave") {
			t.Errorf("proxy to %s: %d %v %s", target, res.StatusCode, res.Header, body)
		}
	}
}

// The edge is journaled (service edge, with its host), faults match it by service and
// host glob, and GET /_emulator/edge lists its routes.
func TestEdgeJournalFaultsAndRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]string{"service": "edge", "host": "*.test"}, "status": 503, "times": 1}), 201)
	if r := e.edgeGet("shop.test", "/", nil); r.Status != 503 || edgeCode(r) != "service_unavailable" {
		t.Fatalf("edge fault: %d %v", r.Status, r.Header)
	}
	mustStatus(t, e.edgeGet("shop.test", "/x", nil), 404)
	var j struct {
		Requests []emulator.JournalEntry `json:"requests"`
	}
	jsonUnmarshal(e.get("/_emulator/requests", "").Body, &j)
	if len(j.Requests) != 2 || j.Requests[0].Service != "edge" || j.Requests[0].Host != "shop.test" || j.Requests[0].Status != 503 ||
		j.Requests[0].ErrorCode != "service_unavailable" || j.Requests[1].ErrorCode != "not_found" || j.Requests[1].Path != "/x" {
		t.Fatalf("journal: %+v", j.Requests)
	}
	var routes struct {
		Routes []struct {
			Host         string  `json:"host"`
			Kind         string  `json:"kind"`
			DeploymentID *string `json:"deployment_id"`
			RedirectTo   *string `json:"redirect_to"`
			Status       string  `json:"status"`
		} `json:"routes"`
	}
	jsonUnmarshal(e.get("/_emulator/edge", "").Body, &routes)
	kinds := map[string]string{}
	for _, r := range routes.Routes {
		kinds[r.Host] = r.Kind
		if r.Host == "shop.test" && (r.DeploymentID == nil || *r.DeploymentID != "dpl_first" || r.Status != "active") {
			t.Errorf("shop.test route: %+v", r)
		}
		if r.Host == "www.shop.test" && (r.RedirectTo == nil || *r.RedirectTo != "shop.test") {
			t.Errorf("www.shop.test route: %+v", r)
		}
	}
	if kinds["shop.test"] != "domain" || kinds["www.shop.test"] != "redirect" || kinds["shop-first.hostemu.localhost"] != "deployment" {
		t.Errorf("routes: %v", kinds)
	}
}

// Uploads are kept, bounded by --file-store-size (507 storage_full, nothing stored),
// and survive an export and import.
func TestEdgeFileStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.FileStoreSize = 100 })
	e.upload(t, strings.Repeat("a", 60))
	big := strings.Repeat("b", 60)
	r := e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: []byte(big),
		Headers: map[string]string{"X-File-Digest": digestOf(big), "Content-Type": "application/octet-stream"}})
	if r.Status != 507 || r.Code() != "storage_full" {
		t.Fatalf("over the store: %d %s", r.Status, r.Body)
	}
	state := e.get("/_emulator/state", "").Body
	if !strings.Contains(string(state), `"uploads":[{"digest":"`+digestOf(strings.Repeat("a", 60))+`"`) {
		t.Fatalf("the export lacks the upload: %.300s", state)
	}
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	if strings.Contains(string(e.get("/_emulator/state", "").Body), digestOf(strings.Repeat("a", 60))) {
		t.Fatal("reset kept an upload")
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: state}), 200)
	if !strings.Contains(string(e.get("/_emulator/state", "").Body), digestOf(strings.Repeat("a", 60))) {
		t.Fatal("the import lost the upload")
	}
}

// Uploaded contents survive a restart with --state: the edge serves them again.
func TestEdgeUploadsSurviveRestart(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/state.json"
	start := func() (*emulator.Server, *env) {
		srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: emulator.ClockManual, ClockStart: testStart, StateFile: path})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		return srv, &env{t: t, emu: srv.Emulator(), url: srv.URL()}
	}
	srv, e := start()
	page := "<h1>kept</h1>"
	h := e.upload(t, page)
	created := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": h}}))
	e.advance("6s")
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, e = start()
	defer srv.Shutdown(t.Context())
	if r := e.edgeGet(host(t, created.URL), "/", nil); r.Status != 200 || string(r.Body) != page {
		t.Fatalf("after restart: %d %q %v", r.Status, r.Body, r.Header)
	}
}
