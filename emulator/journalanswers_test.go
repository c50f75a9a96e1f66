package emulator_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// journalOf is GET /_emulator/requests with query, decoded.
func journalOf(t testing.TB, e *env, query string) []emulator.JournalEntry {
	t.Helper()
	r := e.get("/_emulator/requests"+query, "")
	mustStatus(t, r, 200)
	var out struct{ Requests []emulator.JournalEntry }
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Requests
}

// Issue 33 item 7: the journal keeps each answer — status, the headers a client acts on,
// the body as written — so a test can assert on the Retry-After its app received.
func TestJournalKeepsAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "rate_limit": true, "retry_after": 30, "times": 1}), 201)
	mustStatus(t, e.get("/v1/projects", "t-read"), 429)
	got := e.get("/v1/projects", "t-read")
	mustStatus(t, got, 200)

	es := journalOf(t, e, "?path=/v1/projects")
	if len(es) != 2 {
		t.Fatalf("%d entries", len(es))
	}
	limited, ok := es[0].Response, es[1].Response
	if limited == nil || limited.Status != 429 || limited.Headers.Get("Retry-After") != "30" || limited.Headers.Get("X-RateLimit-Remaining") != "0" ||
		limited.Headers.Get("X-RateLimit-Limit") == "" || !strings.HasPrefix(limited.Headers.Get("Content-Type"), "application/json") ||
		!strings.Contains(limited.Body, `"code":"rate_limited"`) {
		t.Errorf("the 429's response: %+v", limited)
	}
	if es[0].Status != 429 || es[0].ErrorCode != "rate_limited" {
		t.Errorf("the entry's own fields changed: %d %s", es[0].Status, es[0].ErrorCode)
	}
	if ok == nil || ok.Status != 200 || ok.Body != string(got.Body) || ok.Headers.Get("Retry-After") != "" || ok.Headers.Get("X-Ratelimit-Reset") != got.Header.Get("X-Ratelimit-Reset") {
		t.Errorf("the 200's response: %+v\nsent: %s", ok, got.Body)
	}
	for _, x := range []string{"Vary", "Date", "Content-Length"} {
		if ok.Headers.Get(x) != "" {
			t.Errorf("%s kept: only the headers a client acts on are", x)
		}
	}

	// the filters: response_header and header, in queries and awaits
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"?response_header=Retry-After", 1},
		{"?response_header=retry-after:30", 1},
		{"?response_header=Retry-After:3*", 1},
		{"?response_header=Retry-After:31", 0},
		{"?response_header=Content-Type:application/json*&path=/v1/*", 2},
		{"?header=Authorization:*redacted*", 2},
		{"?header=Authorization:Bearer*", 0}, // never stored
	} {
		if n := len(journalOf(t, e, tt.query)); n != tt.want {
			t.Errorf("%s: %d entries, want %d", tt.query, n, tt.want)
		}
	}
	r := e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"response_header": "Retry-After:30", "status": 429}, "timeout": "1s"})
	mustStatus(t, r, 200)
	for _, tt := range []struct{ query, message string }{
		{"?headers=Retry-After", `unknown query parameter "headers" (did you mean "header"?)`},
		{"?response_headers=Retry-After", `unknown query parameter "response_headers" (did you mean "response_header"?)`},
		{"?header=:30", `query parameter "header": a header match needs a header name`},
		{"?response_header=Retry%20After:1", `is not a header name`},
		{"?path=*" + strings.Repeat("a", 1024), "path: a pattern is at most 1024 bytes"},
	} {
		r := e.get("/_emulator/requests"+tt.query, "")
		mustEnvelope(t, r, 400, "invalid_request")
		if msg := r.Err(t).Message; !strings.Contains(msg, tt.message) {
			t.Errorf("%s: %q, want %q", tt.query, msg, tt.message)
		}
	}
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"response_headr": "Retry-After"}, "timeout": "1s"})
	if r.Status != 400 || !strings.Contains(string(r.Body), `did you mean \"response_header\"`) {
		t.Errorf("await with response_headr: %d %s", r.Status, r.Body)
	}
	r = e.post("/_emulator/await", "", map[string]any{"requests": map[string]any{"header": "Bad Name"}, "timeout": "1s"})
	if r.Status != 400 || !strings.Contains(string(r.Body), "requests.header") {
		t.Errorf("await with a bad header match: %d %s", r.Status, r.Body)
	}
}

// The body kept is the one the handler wrote, not the gzip a client asked for; a HEAD
// keeps none; a dropped request has no response; a decrypt answer, the plaintext, is
// never kept.
func TestJournalAnswerBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	list := e.do(req{Method: "GET", Path: "/v1/deployments?limit=100", Token: "t-read", Headers: map[string]string{"Accept-Encoding": "gzip"}})
	mustStatus(t, list, 200)
	if list.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the list was not gzipped (%d bytes): the test needs a bigger answer", len(list.Body))
	}
	mustStatus(t, e.do(req{Method: "HEAD", Path: "/v1/projects", Token: "t-read"}), 200)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects/prj_shop/domains"}, "drop": true}), 201)
	if res, err := http.Get(e.url + "/v1/projects/prj_shop/domains"); err == nil { // dropped
		res.Body.Close()
		t.Fatalf("a dropped request answered %d", res.StatusCode)
	}
	secret := "my-credit-card-4111111111111111"
	mustStatus(t, e.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": e.encrypt(t, secret)}), 200)

	es := journalOf(t, e, "")
	byPath := map[string]emulator.JournalEntry{}
	for _, x := range es {
		byPath[x.Method+" "+x.Path] = x
	}
	if r := byPath["GET /v1/deployments"].Response; r == nil || !strings.HasPrefix(r.Body, `{"`) || !json.Valid([]byte(r.Body)) && !r.BodyTruncated {
		t.Errorf("the gzipped answer's body: %+v", r)
	}
	if r := byPath["HEAD /v1/projects"].Response; r == nil || r.Status != 200 || r.Body != "" {
		t.Errorf("HEAD's response: %+v", r)
	}
	if d := byPath["GET /v1/projects/prj_shop/domains"]; d.Status != 0 || d.Response != nil {
		t.Errorf("a dropped request: status %d, response %+v", d.Status, d.Response)
	}
	dec := byPath["POST /v1/decrypt"].Response
	if dec == nil || dec.Status != 200 || !strings.HasPrefix(dec.Body, "[redacted: ") {
		t.Errorf("decrypt's response: %+v", dec)
	}
	if all := e.get("/_emulator/requests", ""); strings.Contains(string(all.Body), "4111") {
		t.Errorf("the journal holds the plaintext: %s", all.Body)
	}
}

// A deployment read again is answered from the rendered bytes kept for it, and the
// journal keeps those bytes without a copy of its own: each entry's body is still the
// answer as sent, a HEAD's is empty, and a body read after the deployment changed is
// the new one. On a real clock, the entry's time is the request's (taken from the
// reading that timed it).
func TestJournalKeepsRenderedAnswers(t *testing.T) {
	t.Parallel()
	for _, mode := range []clock.Mode{clock.Manual, clock.Real} {
		e := newEnv(t, func(o *emulator.Options) {
			if o.ClockMode = mode; mode == clock.Real {
				o.ClockStart = time.Time{} // the wall itself
			}
		})
		before := time.Now().UTC().Truncate(time.Millisecond)
		var sent []string
		for range 3 {
			r := e.get("/v1/deployments/dpl_second", "t-read")
			mustStatus(t, r, 200)
			sent = append(sent, string(r.Body))
		}
		mustStatus(t, e.do(req{Method: "HEAD", Path: "/v1/deployments/dpl_second", Token: "t-read"}), 200)
		mustStatus(t, e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil), 200)
		r := e.get("/v1/deployments/dpl_second", "t-read")
		mustStatus(t, r, 200)
		sent = append(sent, string(r.Body))
		after := time.Now().UTC()
		if sent[0] != sent[2] || sent[3] == sent[0] {
			t.Fatalf("%s: the answers: %q", mode, sent)
		}
		es := journalOf(t, e, "?path=/v1/deployments/dpl_second")
		if len(es) != 5 {
			t.Fatalf("%s: %d entries", mode, len(es))
		}
		for i, want := range []string{sent[0], sent[1], sent[2], "", sent[3]} {
			if r := es[i].Response; r == nil || r.Status != 200 || r.Body != want || r.BodyTruncated {
				t.Errorf("%s: entry %d (%s): response %+v, want the body sent %q", mode, i, es[i].Method, r, want)
			}
			if mode == clock.Real && (es[i].Time.Before(before) || es[i].Time.After(after)) {
				t.Errorf("real clock: entry %d at %v, not between %v and %v", i, es[i].Time, before, after)
			}
		}
	}
}
