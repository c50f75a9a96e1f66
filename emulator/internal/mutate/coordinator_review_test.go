package mutate

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hitReader calls at before its first Read: the handler has found its round by then.
type hitReader struct {
	r  io.Reader
	at func()
}

func (h *hitReader) Read(p []byte) (int, error) {
	if h.at != nil {
		h.at()
		h.at = nil
	}
	return h.r.Read(p)
}

func coordinatorRequest(path, body string, at func()) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, &hitReader{r: strings.NewReader(body), at: at})
	req.Host = "127.0.0.1:1"
	req.Header.Set("Content-Type", "application/json")
	return req
}

// testCoordinator is a coordinator closed at the test's end.
func testCoordinator(t *testing.T) *Coordinator {
	t.Helper()
	c, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resetRound is a round whose one mutant resets p TestA's listProjects.
func resetRound() *round {
	m := Mutant{Test: "p TestA", Operation: "listProjects", Method: "GET", Path: "/v1/projects", Code: "reset"}
	return &round{runner: goRunner{}, mutants: map[string]*Mutant{"p TestA": &m}}
}

// errorCode reads and closes resp's body, and gives the code of its error envelope
// ("" for none).
func errorCode(resp *http.Response) string {
	defer resp.Body.Close()
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return body.Error.Code
}

// A post whose round ends while its body is read (the run is over: mutate reads the
// round's results) changes nothing of the round, and is told the round is over.
func TestCoordinatorRoundOverMidPost(t *testing.T) {
	c := testCoordinator(t)
	r := resetRound()
	id, _ := c.open(r)
	// a world of the round, then its coverage posted as the round ends
	w := httptest.NewRecorder()
	c.srv.Handler.ServeHTTP(w, coordinatorRequest("/r/"+id+"/world", `{"test":"TestA","package":"p"}`, nil))
	if w.Code != 200 {
		t.Fatalf("hello: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	c.srv.Handler.ServeHTTP(w, coordinatorRequest("/r/"+id+"/coverage",
		`{"world":"w1","coverage":{"operations":[{"method":"GET","path":"/v1/projects","seen":1}]}}`, func() { c.close(id) }))
	if w.Code != 404 {
		t.Errorf("coverage after the round's end: %d %s, want 404", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	c.srv.Handler.ServeHTTP(w, coordinatorRequest("/r/"+id+"/world", `{"test":"TestA","package":"p"}`, nil))
	if w.Code != 404 {
		t.Errorf("hello after the round's end: %d", w.Code)
	}
	// a hello that found its round, which ends while its body is read
	r2 := resetRound()
	id2, _ := c.open(r2)
	w = httptest.NewRecorder()
	c.srv.Handler.ServeHTTP(w, coordinatorRequest("/r/"+id2+"/world", `{"test":"TestA","package":"p"}`, func() { c.close(id2) }))
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.Code != 404 || r2.worlds != 0 || len(r2.armed) != 0 {
		t.Errorf("hello as the round ends: %d %s, worlds %d armed %v; want 404 and nothing recorded", w.Code, w.Body, r2.worlds, r2.armed)
	}
	if len(r.called) != 0 {
		t.Errorf("called = %v, want nothing recorded after the round's end", r.called)
	}
}

// A web page cannot drive the coordinator: not cross-origin (a simple POST needs no
// preflight), not through a name that resolves to loopback (DNS rebinding), not with
// a body that is not JSON.
func TestCoordinatorRefusesBrowsers(t *testing.T) {
	c := testCoordinator(t)
	r := resetRound()
	id, url := c.open(r)
	for _, tc := range []struct {
		name   string
		set    func(*http.Request)
		status int
		code   string
	}{
		{"a page's origin", func(q *http.Request) { q.Header.Set("Origin", "http://evil.example") }, 403, "forbidden_origin"},
		{"a null origin", func(q *http.Request) { q.Header.Set("Origin", "null") }, 403, "forbidden_origin"},
		{"a no-cors fetch", func(q *http.Request) { q.Header.Set("Sec-Fetch-Site", "cross-site") }, 403, "forbidden_origin"},
		{"a rebound name", func(q *http.Request) { q.Host = "rebind.evil.example:" + strings.Split(c.ln.Addr().String(), ":")[1] }, 403, "forbidden_host"},
		{"a text/plain form", func(q *http.Request) { q.Header.Set("Content-Type", "text/plain") }, 415, "unsupported_media_type"},
		{"no content type", func(q *http.Request) { q.Header.Del("Content-Type") }, 415, "unsupported_media_type"},
	} {
		for _, path := range []string{"/world", "/coverage"} {
			q, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(`{"test":"TestA","package":"p"}`))
			q.Header.Set("Content-Type", "application/json")
			tc.set(q)
			resp, err := http.DefaultClient.Do(q)
			if err != nil {
				t.Fatal(err)
			}
			if code := errorCode(resp); resp.StatusCode != tc.status || code != tc.code {
				t.Errorf("%s %s: %d %q, want %d %s", tc.name, path, resp.StatusCode, code, tc.status, tc.code)
			}
		}
	}
	c.mu.Lock()
	if r.worlds != 0 {
		t.Errorf("%d worlds made by refused posts", r.worlds)
	}
	c.mu.Unlock()
	// testkits' own posts pass: 127.0.0.1, localhost, a charset
	for _, host := range []string{"", "localhost"} {
		q, _ := http.NewRequest(http.MethodPost, url+"/world", strings.NewReader(`{"test":"TestA","package":"p"}`))
		q.Header.Set("Content-Type", "application/json; charset=utf-8")
		if host != "" {
			q.Host = host + ":" + strings.Split(c.ln.Addr().String(), ":")[1]
		}
		resp, err := http.DefaultClient.Do(q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("a testkit's hello (host %q): %d", host, resp.StatusCode)
		}
	}
	_ = id
}

// What a round keeps is bounded whatever the suite posts: a hello names a test in at
// most maxHello bytes, the names of a round's tests come to at most maxNames bytes,
// and coverage records only operations of the description.
func TestCoordinatorBoundsWhatItKeeps(t *testing.T) {
	c := testCoordinator(t)
	r := &round{runner: goRunner{}, baseline: true}
	id, _ := c.open(r)
	serve := func(path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		c.srv.Handler.ServeHTTP(w, coordinatorRequest("/r/"+id+path, body, nil))
		return w
	}
	if w := serve("/world", `{"test":"`+strings.Repeat("x", maxHello)+`"}`); w.Code != 413 {
		t.Errorf("a hello over %d bytes: %d", maxHello, w.Code)
	}
	if w := serve("/world", `{"test":"TestA","package":"p"}`); w.Code != 200 {
		t.Fatalf("hello: %d %s", w.Code, w.Body)
	}
	var ops []string
	for i := range 1000 {
		ops = append(ops, fmt.Sprintf(`{"method":"GET","path":"/made/up/%d","seen":1}`, i))
	}
	ops = append(ops, `{"method":"get","path":"/v1/projects","seen":1}`)
	if w := serve("/coverage", `{"world":"w1","coverage":{"operations":[`+strings.Join(ops, ",")+`]}}`); w.Code != 204 {
		t.Fatalf("coverage: %d %s", w.Code, w.Body)
	}
	c.mu.Lock()
	got := r.called["p TestA"]
	c.mu.Unlock()
	if len(got) != 1 || !got["GET /v1/projects"] {
		t.Errorf("called = %d operations, want the one of the description", len(got))
	}
	// distinct test names, each under maxHello, until their sum is over maxNames
	defer func(n int) { maxNames = n }(maxNames)
	maxNames = 1 << 20
	name := strings.Repeat("n", maxHello-100)
	refused := 0
	for i := 0; i < maxNames/len(name)+2; i++ {
		w := serve("/world", fmt.Sprintf(`{"test":"%s%d","package":"p"}`, name, i))
		if w.Code == 507 {
			refused++
		} else if w.Code != 200 {
			t.Fatalf("hello %d: %d %s", i, w.Code, w.Body)
		}
	}
	c.mu.Lock()
	held := r.held
	c.mu.Unlock()
	if refused == 0 || held > maxNames {
		t.Errorf("names held %d bytes (bound %d), %d hellos refused", held, maxNames, refused)
	}
	// a name seen already costs nothing more
	if w := serve("/world", `{"test":"TestA","package":"p"}`); w.Code != 200 {
		t.Errorf("a known test's hello once the names are full: %d", w.Code)
	}
}

// Whatever is asked of the coordinator, an error is answered in the envelope: an
// unknown path, another method than POST.
func TestCoordinatorErrorsInTheEnvelope(t *testing.T) {
	c := testCoordinator(t)
	_, url := c.open(&round{runner: goRunner{}})
	base := "http://" + c.ln.Addr().String()
	for _, tc := range []struct {
		method, url string
		status      int
		code        string
	}{
		{"GET", url + "/world", 405, "method_not_allowed"},
		{"PUT", url + "/coverage", 405, "method_not_allowed"},
		{"GET", base + "/", 404, "not_found"},
		{"POST", base + "/r/x/other", 404, "not_found"},
		{"GET", base + "/favicon.ico", 404, "not_found"},
	} {
		q, _ := http.NewRequest(tc.method, tc.url, nil)
		resp, err := http.DefaultClient.Do(q)
		if err != nil {
			t.Fatal(err)
		}
		if code := errorCode(resp); resp.StatusCode != tc.status || code != tc.code || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %q (%s), want %d %s", tc.method, tc.url, resp.StatusCode, code, resp.Header.Get("Content-Type"), tc.status, tc.code)
		}
	}
}

// A post with a key the protocol does not have is refused naming it and the closest
// known one: a testkit's typo says what it meant.
func TestCoordinatorNamesAnUnknownKey(t *testing.T) {
	c := testCoordinator(t)
	_, url := c.open(&round{runner: goRunner{}})
	for _, tc := range []struct{ path, body, want string }{
		{"/world", `{"tset":"TestA"}`, `unknown key "tset" (did you mean "test"?)`},
		{"/coverage", `{"wrold":"w1","coverage":{}}`, `unknown key "wrold" (did you mean "world"?)`},
		// a key given twice is refused as the control API's bodies refuse it: encoding/json
		// would keep the last, and a testkit's bug would pass unseen
		{"/world", `{"test":"TestA","test":"TestB"}`, `key "test" is given twice: give it once`},
		{"/coverage", `{"world":"w1","coverage":{"operations":[],"operations":[]}}`, `key "operations" in coverage is given twice`},
		// one field in two cases, which encoding/json reads as one (and keeps the last)
		{"/world", `{"test":"TestA","TEST":"TestB"}`, `both set "test": give it once`},
	} {
		code, body := post(t, url+tc.path, tc.body)
		e, _ := body["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != 400 || e["code"] != "invalid_json" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %s: %d %v, want 400 invalid_json saying %s", tc.path, tc.body, code, body, tc.want)
		}
	}
}
