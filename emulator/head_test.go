package emulator_test

import (
	"net/http"
	"testing"
)

// TestHeadAnswersWhereGetDoes: HEAD has GET's status and headers and no body, on every
// kind of route (public, control, health, docs, and the errors of each), and on a
// public route it is counted and journaled like GET.
func TestHeadAnswersWhereGetDoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		path, token string
		status      int
		namesMethod bool // the error message says "HEAD" where GET's says "GET"
	}{
		{"/v1/projects", "t-read", 200, false},
		{"/v1/deployments", "t-read", 200, false},
		{"/v1/deployments/dpl_nope", "t-read", 404, false},
		{"/v1/projects", "", 401, false},
		{"/v1/files", "t-deploy", 405, true},
		{"/nope", "", 404, true},
		{"/_emulator/health", "", 200, false},
		{"/_emulator/clock", "", 200, false},
		{"/_emulator/state", "", 200, false},
		{"/_emulator/requests", "", 200, false},
		{"/_emulator/faults", "", 200, false},
		{"/_emulator/faults/flt_nope", "", 404, false},
		{"/_emulator/scenarios", "", 200, false},
		{"/docs", "", 200, false},
		{"/docs/errors/not_found", "", 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.path+"/"+tt.token, func(t *testing.T) {
			get := e.do(req{Method: "GET", Path: tt.path, Token: tt.token, Headers: map[string]string{"Accept-Encoding": "identity"}})
			head := e.do(req{Method: "HEAD", Path: tt.path, Token: tt.token, Headers: map[string]string{"Accept-Encoding": "identity"}})
			if get.Status != tt.status || head.Status != tt.status {
				t.Fatalf("GET %d, HEAD %d, want %d: %s", get.Status, head.Status, tt.status, head.Body)
			}
			if len(head.Body) != 0 {
				t.Errorf("HEAD has a body: %q", head.Body)
			}
			for _, h := range []string{"Content-Type", "Content-Length", "Allow", "X-RateLimit-Limit", "Vary"} {
				if h == "Content-Length" && tt.namesMethod {
					continue
				}
				if g, hd := get.Header.Get(h), head.Header.Get(h); g != hd {
					t.Errorf("%s: GET %q, HEAD %q", h, g, hd)
				}
			}
		})
	}

	t.Run("counted and journaled", func(t *testing.T) {
		mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
		first := e.do(req{Method: "HEAD", Path: "/v1/projects", Token: "t-admin"})
		second := e.do(req{Method: "HEAD", Path: "/v1/projects", Token: "t-admin"})
		if first.Header.Get("X-RateLimit-Remaining") == second.Header.Get("X-RateLimit-Remaining") {
			t.Errorf("HEAD was not counted: remaining %s then %s", first.Header.Get("X-RateLimit-Remaining"), second.Header.Get("X-RateLimit-Remaining"))
		}
		var j struct {
			Requests []struct {
				Method string
				Path   string
				Status int
			}
		}
		r := e.get("/_emulator/requests?method=HEAD", "")
		if err := jsonUnmarshal(r.Body, &j); err != nil {
			t.Fatal(err)
		}
		if len(j.Requests) != 2 || j.Requests[0].Path != "/v1/projects" || j.Requests[0].Status != 200 {
			t.Errorf("journal of HEAD requests: %+v", j.Requests)
		}
	})

	t.Run("preflight still answered", func(t *testing.T) {
		r := e.do(req{Method: "OPTIONS", Path: "/v1/projects", Headers: map[string]string{"Origin": "http://app.test", "Access-Control-Request-Method": "GET"}})
		if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Errorf("preflight: %d %v", r.Status, r.Header)
		}
	})
}
