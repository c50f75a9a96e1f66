package emulator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// sse is one server-sent event as a client reads it.
type sse struct {
	ID, Type string
	Data     map[string]any
}

// stream is an open GET /_emulator/events.
type stream struct {
	t   testing.TB
	res *http.Response
	r   *bufio.Reader
}

// openEvents subscribes and reads the stream's opening comment: from then on, every
// change is in the stream.
func openEvents(t testing.TB, base, query string, header map[string]string) *stream {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/_emulator/events"+query, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &stream{t: t, res: res, r: bufio.NewReader(res.Body)}
	if first := s.block(); !strings.HasPrefix(first, ": hostemu events") {
		t.Fatalf("first block %q", first)
	}
	return s
}

// block reads up to the next blank line.
func (s *stream) block() string {
	s.t.Helper()
	var b strings.Builder
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the stream: %v (read %q)", err, b.String())
		}
		if line == "\n" {
			return b.String()
		}
		b.WriteString(line)
	}
}

// next reads the next event, skipping comments (heartbeats).
func (s *stream) next() sse {
	s.t.Helper()
	for {
		var ev sse
		for _, line := range strings.Split(strings.TrimSuffix(s.block(), "\n"), "\n") {
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.Data); err != nil {
					s.t.Fatalf("data %q: %v", line, err)
				}
			}
		}
		if ev.Type != "" {
			return ev
		}
	}
}

func (ev sse) String() string {
	parts := []string{ev.Type}
	for _, k := range []string{"change", "status", "method", "path"} {
		if v, ok := ev.Data[k].(string); ok {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

func TestEventStreamOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	all := openEvents(t, e.url, "", nil)
	deployments := openEvents(t, e.url, "?types=deployment", nil)

	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r, 201)
	e.advance("6s")
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]string{"path": "/v1/projects"}, "status": 503, "times": 1}), 201)
	mustStatus(t, e.get("/v1/projects", "t-read"), 503)

	want := []string{
		"deployment created queued",
		"request POST /v1/deployments",
		"deployment status building",
		"deployment status ready",
		"clock",
		"fault added",
		"fault hit",
		"request GET /v1/projects",
	}
	var ids []string
	for i, w := range want {
		ev := all.next()
		if ev.String() != w {
			t.Fatalf("event %d is %q, want %q", i, ev, w)
		}
		ids = append(ids, ev.ID)
	}
	for i := 1; i < len(ids); i++ {
		a, _ := strconv.Atoi(ids[i-1])
		b, _ := strconv.Atoi(ids[i])
		if b != a+1 {
			t.Errorf("ids not consecutive: %v", ids)
		}
	}
	for i, w := range []string{"deployment created queued", "deployment status building", "deployment status ready"} {
		if ev := deployments.next(); ev.String() != w {
			t.Fatalf("filtered event %d is %q, want %q", i, ev, w)
		}
	}
}

func TestEventStreamEndsOnShutdown(t *testing.T) {
	t.Parallel()
	s, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", Fixtures: "testdata/fixtures.yaml", ClockMode: emulator.ClockManual, ClockStart: testStart})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	ev := openEvents(t, s.URL(), "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open event stream: %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	end := ev.next()
	if end.Type != "end" || !strings.HasPrefix(end.Data["reason"].(string), "closed") {
		t.Errorf("last event %v %v", end.Type, end.Data)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestDashboardPagesAndGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	navigate := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	tests := []struct {
		name, method, path string
		headers            map[string]string
		host               string
		status             int
		code               string
	}{
		{"landing", "GET", "/", nil, "", 200, ""},
		{"dashboard", "GET", "/dashboard", nil, "", 200, ""},
		{"tokens page", "GET", "/account/tokens", nil, "", 200, ""},
		{"head", "HEAD", "/dashboard", nil, "", 200, ""},
		{"pages are read-only", "POST", "/dashboard", nil, "", 405, "method_not_allowed"},
		{"asset", "GET", "/dashboard/assets/dashboard.js", nil, "", 200, ""},
		{"no such asset", "GET", "/dashboard/assets/nope.js", nil, "", 404, "not_found"},
		{"a page is not an asset", "GET", "/dashboard/assets/index.html", nil, "", 404, "not_found"},
		{"the shared layout is not an asset", "GET", "/dashboard/assets/layout.html", nil, "", 404, "not_found"},
		{"a link from another site opens a page", "GET", "/dashboard", navigate, "", 200, ""},
		{"another site's fetch of a page", "GET", "/dashboard", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "", 403, "forbidden_origin"},
		{"another site's frame", "GET", "/dashboard", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, "", 403, "forbidden_origin"},
		{"another site's script", "GET", "/dashboard/assets/api.js", map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Dest": "script"}, "", 403, "forbidden_origin"},
		{"another origin", "GET", "/dashboard", map[string]string{"Origin": "http://evil.example"}, "", 403, "forbidden_origin"},
		{"data calls never navigate", "GET", "/_emulator/events", navigate, "", 403, "forbidden_origin"},
		{"rebinding", "GET", "/dashboard", nil, "rebind.evil.example", 403, "forbidden_host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(req{Method: tt.method, Path: tt.path, Headers: tt.headers, Host: tt.host})
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", r.Status, tt.status, r.Body)
			}
			if tt.code != "" {
				if got := r.Err(t).Code; got != tt.code {
					t.Errorf("code %q, want %q", got, tt.code)
				}
				return
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP %q", csp)
			}
		})
	}
	// each page fills the shared layout with its own title and current link
	for path, want := range map[string][]string{
		"/":               {"<title>hostemu · hostemu</title>", `<a href="/" aria-current="page">Home</a>`},
		"/dashboard":      {"<title>Dashboard · hostemu</title>", `<a href="/dashboard" aria-current="page">Dashboard</a>`},
		"/account/tokens": {"<title>Tokens · hostemu</title>", `<a href="/account/tokens" aria-current="page">Tokens</a>`},
	} {
		r := e.get(path, "")
		mustStatus(t, r, 200)
		for _, w := range want {
			if !strings.Contains(string(r.Body), w) {
				t.Errorf("%s lacks %s", path, w)
			}
		}
		if n := strings.Count(string(r.Body), `aria-current="page"`); n != 1 {
			t.Errorf("%s marks %d links current, want 1", path, n)
		}
	}
	// pages are neither journaled nor faulted
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"status": 503}), 201)
	mustStatus(t, e.get("/dashboard", ""), 200)
	var j struct{ Requests []any }
	json.Unmarshal(e.get("/_emulator/requests", "").Body, &j)
	if len(j.Requests) != 0 {
		t.Errorf("the journal holds %d page requests", len(j.Requests))
	}
}

func TestDashboardWithControlToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "sesame" })
	mustStatus(t, e.get("/dashboard", ""), 200) // the page holds nothing: it asks for the token
	r := e.get("/_emulator/events", "")
	if r.Status != 401 || r.Err(t).Code != "missing_token" {
		t.Fatalf("events without the token: %d %s", r.Status, r.Body)
	}
	openEvents(t, e.url, "", map[string]string{"Authorization": "Bearer sesame"})
}

func TestControlRoutesForTheDashboard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var o struct {
		Projects []struct {
			ID          string
			Deployments []struct{ ID, Status string }
			Domains     []struct{ Hostname string }
		}
	}
	r := e.get("/_emulator/projects", "")
	mustStatus(t, r, 200)
	json.Unmarshal(r.Body, &o)
	if len(o.Projects) != 2 || o.Projects[1].ID != "prj_shop" || len(o.Projects[1].Deployments) != 3 || len(o.Projects[1].Domains) != 2 {
		t.Fatalf("overview: %s", r.Body)
	}
	var tokens struct {
		Tokens        []struct{ Token, Scope string }
		CipherAPIKeys []string `json:"cipher_api_keys"`
	}
	json.Unmarshal(e.get("/_emulator/tokens", "").Body, &tokens)
	if len(tokens.Tokens) != 3 || len(tokens.CipherAPIKeys) != 1 {
		t.Errorf("tokens: %+v", tokens)
	}
	mustStatus(t, e.post("/_emulator/deployments/dpl_second/promote", "", map[string]any{}), 200)
	if r := e.post("/_emulator/deployments/dpl_broken/promote", "", map[string]any{}); r.Status < 400 {
		t.Errorf("promoting an error deployment: %d", r.Status)
	}
	mustStatus(t, e.get("/_emulator/deployments/dpl_first/logs", ""), 200)
	mustStatus(t, e.post("/_emulator/projects/prj_shop/domains", "", map[string]string{"hostname": "new.shop.test"}), 201)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/projects/prj_shop/domains/new.shop.test"}), 200)

	// the next transition: a new deployment starts building 1 s after it was queued
	r = e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}})
	mustStatus(t, r, 201)
	var d struct{ ID string }
	json.Unmarshal(r.Body, &d)
	var step struct {
		Now   string
		Fired bool
	}
	r = e.post("/_emulator/clock/next", "", nil)
	mustStatus(t, r, 200)
	json.Unmarshal(r.Body, &step)
	var got struct{ Status string }
	json.Unmarshal(e.get("/v1/deployments/"+d.ID, "t-read").Body, &got)
	if !step.Fired || step.Now != "2026-11-21T12:00:01.000Z" || got.Status != "building" {
		t.Errorf("clock/next: %s; deployment %s", r.Body, got.Status)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"mode": "real"}}), 200)
	if r := e.post("/_emulator/clock/next", "", nil); r.Status != 400 {
		t.Errorf("clock/next on a real clock: %d %s", r.Status, r.Body)
	}
}

// A client that subscribes and never reads holds nobody up: requests are answered at
// full speed while its stream backs up and it is dropped.
func TestStuckEventClientDoesNotSlowRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /_emulator/events HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(e.url, "http://"))
	big := strings.Repeat("x", 4000) // each request event carries 1 KiB of its body
	for range 2000 {
		mustStatus(t, e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: `{"project_id":"nope","files":{},"pad":"` + big + `"}`}), 404)
	}
}

// ?types= is strict (a typo is 400 naming the closest type, not a silent stream), and
// the event streams open at once are bounded: the one past Limits.MaxEventStreams is
// 429 until another closes.
func TestEventStreamTypesAndCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Limits.MaxEventStreams = 2 })
	if r := e.get("/_emulator/events?types=scenarioo", ""); r.Status != 400 || !strings.Contains(r.Err(t).Message, `did you mean "scenario"`) {
		t.Fatalf("a misspelt type: %d %s", r.Status, r.Body)
	}
	a := openEvents(t, e.url, "?types=scenario", nil)
	openEvents(t, e.url, "?types=deployment,domain&types=clock", nil)
	if r := e.get("/_emulator/events", ""); r.Status != 429 || r.Code() != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a third stream: %d %s", r.Status, r.Body)
	}
	a.res.Body.Close()
	var r resp
	for i := 0; i < 200; i++ { // the handler sees the close when it next writes or reads
		mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/scenarios/active", Body: map[string]string{"name": "default"}}), 200)
		req, _ := http.NewRequest("GET", e.url+"/_emulator/events", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Status = res.StatusCode
		res.Body.Close()
		if r.Status == 200 {
			return
		}
	}
	t.Fatalf("after a stream closed, a new one is still %d", r.Status)
}
