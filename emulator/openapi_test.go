package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// The public OpenAPI description is served as JSON and YAML without a token, names the
// address it was asked on (or --public-url) in servers, and is the same document both
// ways.
func TestOpenAPIDescriptionIsServed(t *testing.T) {
	for _, tt := range []struct {
		name, publicURL string
	}{
		{"request's host", ""},
		{"public URL", "https://hostemu.example.test"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(o *emulator.Options) { o.PublicURL = tt.publicURL })
			want := tt.publicURL
			if want == "" {
				want = e.url
			}
			js := e.get("/openapi.json", "")
			mustStatus(t, js, 200)
			if ct := js.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("JSON Content-Type = %q", ct)
			}
			var doc struct {
				OpenAPI string `json:"openapi"`
				Servers []struct {
					URL string `json:"url"`
				} `json:"servers"`
				Paths map[string]any `json:"paths"`
			}
			if err := json.Unmarshal(js.Body, &doc); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != want || doc.Paths["/v1/deployments"] == nil {
				t.Errorf("openapi %q, servers %+v, %d paths; want 3.1.0 and server %s", doc.OpenAPI, doc.Servers, len(doc.Paths), want)
			}
			y := e.get("/openapi.yaml", "")
			mustStatus(t, y, 200)
			if ct := y.Header.Get("Content-Type"); ct != "application/yaml" {
				t.Errorf("YAML Content-Type = %q", ct)
			}
			if !strings.HasPrefix(string(y.Body), "openapi: 3.1.0\n") || !strings.Contains(string(y.Body), "\nservers:\n  - url: "+want+"\n") {
				t.Errorf("YAML does not start as written or names the wrong server: %.200s", y.Body)
			}
		})
	}
}

// The description is never rate limited, journaled or faulted, and a browser app may
// read it (the public APIs' CORS rules).
func TestOpenAPIDescriptionIsOutsideTheServices(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"status": 503}), 201)
	for i := range 30 { // the per-IP limit without a token is 10 a second, and the clock stands still
		r := e.do(req{Method: "GET", Path: "/openapi.json", Headers: map[string]string{"Origin": "http://app.example.test"}})
		if r.Status != 200 {
			t.Fatalf("request %d: status %d: %.200s", i, r.Status, r.Body)
		}
		if r.Header.Get("X-Ratelimit-Limit") != "" {
			t.Fatalf("rate-limit headers on the description")
		}
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != "http://app.example.test" {
			t.Fatalf("Access-Control-Allow-Origin = %q", got)
		}
	}
	pre := e.do(req{Method: "OPTIONS", Path: "/openapi.yaml", Headers: map[string]string{"Origin": "http://app.example.test", "Access-Control-Request-Method": "GET"}})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "http://app.example.test" {
		t.Errorf("preflight: %d %v", pre.Status, pre.Header)
	}
	if rs := decode[journalPage](t, e.get("/_emulator/requests", "")).Requests; len(rs) != 0 {
		t.Errorf("journal holds %d requests, want none: %+v", len(rs), rs[0])
	}
}

// recorder is a testing.TB that keeps the failures it is told of, so that a test can
// show a helper fails.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) { r.Errorf(format, a...); r.TB.Fatalf(format, a...) }

// The black-box helpers hold every answer to the description: a test double that
// answers unlike it (a field renamed, a status changed, a header dropped, an enum
// value out of its set) fails the test that made the request, and the real emulator
// does not.
func TestOpenAPIValidatorCatchesWrongAnswers(t *testing.T) {
	tests := []struct {
		name   string
		double func(status int, h http.Header, body []byte) (int, []byte)
		want   string
	}{
		{"unchanged", func(s int, _ http.Header, b []byte) (int, []byte) { return s, b }, ""},
		{"field renamed", func(s int, _ http.Header, b []byte) (int, []byte) {
			return s, bytes.ReplaceAll(b, []byte(`"next_cursor"`), []byte(`"nextCursor"`))
		}, "does not match the description"},
		{"status changed", func(s int, _ http.Header, b []byte) (int, []byte) {
			if s == 200 {
				s = 202
			}
			return s, b
		}, "does not list"},
		{"rate-limit header dropped", func(s int, h http.Header, b []byte) (int, []byte) {
			h.Del("X-Ratelimit-Remaining")
			return s, b
		}, "X-RateLimit-Remaining"},
		{"enum value out of its set", func(s int, _ http.Header, b []byte) (int, []byte) {
			return s, bytes.ReplaceAll(b, []byte(`"status":"ready"`), []byte(`"status":"done"`))
		}, "does not match the description"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			e := newDoubleEnv(rec, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					c := httptest.NewRecorder()
					next.ServeHTTP(c, r)
					status, body := tt.double(c.Code, c.Header(), c.Body.Bytes())
					maps.Copy(w.Header(), c.Header())
					w.Header().Del("Content-Length")
					w.WriteHeader(status)
					w.Write(body)
				})
			})
			e.get("/v1/projects", "t-read")
			e.get("/v1/deployments?status=ready", "t-read")
			got := strings.Join(rec.failures, "\n")
			if tt.want == "" && got != "" {
				t.Errorf("the emulator's own answers fail the description:\n%s", got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("failures %q, want one naming %q", got, tt.want)
			}
		})
	}
}

// The control API's description is served under the control API's rules: with
// --control-token, only with the token; its servers name /_emulator and a namespace's
// prefix at the address asked.
func TestControlOpenAPIDescription(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.ControlToken = "sesame" })
	if r := e.get("/_emulator/openapi.json", ""); r.Status != 401 {
		t.Fatalf("without the control token: %d, want 401", r.Status)
	}
	for _, path := range []string{"/_emulator/openapi.json", "/_emulator/openapi.yaml"} {
		r := e.do(req{Method: "GET", Path: path, Headers: map[string]string{"Authorization": "Bearer sesame"}})
		mustStatus(t, r, 200)
		for _, want := range []string{e.url + "/_emulator", e.url + "/_emulator/namespaces/{ns}", "operationId"} {
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
}
