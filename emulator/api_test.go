package emulator_test

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

func TestAuthAndScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	minted := decode[emulator.Token](t, e.post("/_emulator/tokens", "", map[string]string{"scope": "read"})).Token
	tests := []struct {
		name, method, path, auth string
		status                   int
		code                     string
	}{
		{"no header", "GET", "/v1/projects", "", 401, "missing_token"},
		{"unknown token", "GET", "/v1/projects", "Bearer nope", 401, "invalid_token"},
		{"malformed scheme", "GET", "/v1/projects", "Basic dC1yZWFk", 401, "invalid_token"},
		{"empty bearer", "GET", "/v1/projects", "Bearer ", 401, "invalid_token"},
		{"lower-case bearer", "GET", "/v1/projects", "bearer t-read", 200, ""},
		{"minted read", "GET", "/v1/projects", "Bearer " + minted, 200, ""},
		{"read lists deployments", "GET", "/v1/deployments", "Bearer t-read", 200, ""},
		{"read cannot deploy", "POST", "/v1/deployments", "Bearer t-read", 403, "insufficient_scope"},
		{"read cannot promote", "POST", "/v1/deployments/dpl_second/promote", "Bearer t-read", 403, "insufficient_scope"},
		{"deploy can promote", "POST", "/v1/deployments/dpl_second/promote", "Bearer t-deploy", 200, ""},
		{"admin can promote", "POST", "/v1/deployments/dpl_first/promote", "Bearer t-admin", 200, ""},
		{"read cannot add domain", "POST", "/v1/projects/prj_shop/domains", "Bearer t-read", 403, "insufficient_scope"},
		{"deploy cannot delete domain", "DELETE", "/v1/projects/prj_shop/domains/shop.test", "Bearer t-deploy", 403, "insufficient_scope"},
		{"read lists domains", "GET", "/v1/projects/prj_shop/domains", "Bearer t-read", 200, ""},
		{"cipher key is not a hosting token", "GET", "/v1/projects", "Bearer t-cipher", 401, "invalid_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.auth != "" {
				h["Authorization"] = tt.auth
			}
			r := e.do(req{Method: tt.method, Path: tt.path, Headers: h})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
			if tt.code == "insufficient_scope" && !strings.Contains(string(r.Body), "scope") {
				t.Errorf("message does not name the scope needed: %s", r.Body)
			}
		})
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/tokens/" + minted}), 200)
	if r := e.get("/v1/projects", minted); r.Code() != "invalid_token" {
		t.Errorf("revoked token: %d %s", r.Status, r.Code())
	}
	if r := e.do(req{Method: "DELETE", Path: "/_emulator/tokens/" + minted}); r.Status != 404 {
		t.Errorf("revoking twice: %d", r.Status)
	}
	if r := e.post("/_emulator/tokens", "", map[string]string{"scope": "root"}); r.Status != 400 || r.Code() != "invalid_request" {
		t.Errorf("minting an unknown scope: %d %s", r.Status, r.Code())
	}
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/nope", 404, "not_found"},
		{"GET", "/v1/deployments/", 404, "not_found"},
		{"GET", "/v1/projects/", 404, "not_found"},
		{"GET", "/V1/projects", 404, "not_found"},
		{"GET", "/nope", 404, "not_found"}, // "/" is the landing page
		{"PUT", "/v1/deployments", 405, "method_not_allowed"},
		{"DELETE", "/v1/projects", 405, "method_not_allowed"},
		{"PATCH", "/v1/deployments/dpl_first", 405, "method_not_allowed"},
		{"GET", "/v1/deployments/dpl_first/promote", 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.do(req{Method: tt.method, Path: tt.path, Token: "t-admin"})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if r.Header.Get("Location") != "" {
				t.Error("answered with a redirect")
			}
			if tt.status == 405 && r.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
			if r.Header.Get("X-RateLimit-Remaining") == "" {
				t.Error("no rate-limit headers")
			}
		})
	}
}

func TestDocURLResolves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	url := e.get("/v1/projects", "").Err(t).DocURL
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/docs", "/docs/errors", "/docs/errors/rate_limited", "/docs/errors/made_up_by_a_fault"} {
		if r := e.get(path, ""); r.Status != 200 || !strings.Contains(string(r.Body), "<h1>") {
			t.Errorf("GET %s: %d", path, r.Status)
		}
	}
	if r := e.get("/docs/errors/NOT%20A%20CODE", ""); r.Status != 404 || r.Code() != "not_found" {
		t.Errorf("bad doc code: %d %s", r.Status, r.Code())
	}

	pub := newEnv(t, func(o *emulator.Options) { o.PublicURL = "https://hostemu.ci.example/" })
	if got := pub.get("/v1/projects", "").Err(t).DocURL; got != "https://hostemu.ci.example/docs/errors/missing_token" {
		t.Errorf("doc_url with --public-url = %v", got)
	}
	logs := decode[emulator.Deployment](t, pub.get("/v1/deployments/dpl_first", "t-read")).BuildLogsURL
	if logs != "https://hostemu.ci.example/v1/deployments/dpl_first/logs" {
		t.Errorf("build_logs_url with --public-url = %v", logs)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/projects", "t-read")
	limit, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Limit"))
	remaining, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
	reset, _ := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if limit != 3000 || remaining != 2999 {
		t.Errorf("per-token headers limit %d remaining %d, want 3000 (100/s × 30 s burst) and 2999", limit, remaining)
	}
	if reset < testStart.Unix() || reset > testStart.Unix()+30 {
		t.Errorf("X-RateLimit-Reset %d, want an epoch second within 30 s of the clock (%d)", reset, testStart.Unix())
	}
}

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// unauthenticated: a bucket of 10/s × 30 s = 300 per IP, counted before auth
	var last resp
	for i := 0; i < 301; i++ {
		last = e.get("/v1/projects", "bad-token")
	}
	if last.Status != 429 || last.Code() != "rate_limited" {
		t.Fatalf("301st unauthenticated request: %d %s, want 429 rate_limited", last.Status, last.Code())
	}
	if ra, _ := strconv.Atoi(last.Header.Get("Retry-After")); ra < 1 {
		t.Errorf("Retry-After %q", last.Header.Get("Retry-After"))
	}
	if last.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("Remaining on 429 = %q, want 0", last.Header.Get("X-RateLimit-Remaining"))
	}
	// a valid token does not spend (nor suffer) the IP's bucket
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	// the bucket refills on the emulator clock
	e.advance("1s")
	if r := e.get("/v1/projects", ""); r.Status != 401 {
		t.Errorf("after 1 s: %d, want 401 again", r.Status)
	}

	off := newEnv(t, func(o *emulator.Options) { o.RateLimitsOff = true })
	for i := 0; i < 301; i++ {
		last = off.get("/v1/projects", "")
	}
	if last.Status != 401 || last.Header.Get("X-RateLimit-Limit") == "" {
		t.Errorf("with rate limits off: %d, headers %v", last.Status, last.Header)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(req{Method: "OPTIONS", Path: "/v1/deployments/dpl_first", Headers: map[string]string{
		"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization",
	}})
	if r.Status != 204 {
		t.Fatalf("preflight: %d %s", r.Status, r.Body)
	}
	for h, want := range map[string]string{
		// the origin echoed, with credentials: --cors-origins * lets browser apps send
		// credentials too (fetch's credentials: "include", axios' withCredentials)
		"Access-Control-Allow-Origin":      "http://localhost:5173",
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Headers":     "authorization", // the requested headers, echoed
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Errorf("Allow-Methods %q", r.Header.Get("Access-Control-Allow-Methods"))
	}
	g := e.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "http://localhost:5173"}})
	if exp := g.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "X-RateLimit-Remaining") || !strings.Contains(exp, "Retry-After") {
		t.Errorf("Expose-Headers %q", exp)
	}
	// preflights are neither authenticated nor counted
	for i := 0; i < 400; i++ {
		e.do(req{Method: "OPTIONS", Path: "/v1/projects", Headers: map[string]string{"Origin": "http://a.test", "Access-Control-Request-Method": "GET"}})
	}
	if r := e.get("/v1/projects", ""); r.Status != 401 {
		t.Errorf("after 400 preflights an unauthenticated GET is %d, want 401 (not 429)", r.Status)
	}

	only := newEnv(t, func(o *emulator.Options) { o.CORSOrigins = []string{"http://app.test"} })
	r = only.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "http://evil.test"}})
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("an origin outside --cors-origins was allowed")
	}
	r = only.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "http://app.test"}})
	if r.Header.Get("Access-Control-Allow-Origin") != "http://app.test" {
		t.Errorf("Allow-Origin %q", r.Header.Get("Access-Control-Allow-Origin"))
	}
}

// The client IP is the TCP peer; X-Forwarded-For counts only from --trusted-proxies.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	from := func(e *env, ip string) int {
		return e.do(req{Method: "GET", Path: "/v1/projects", Headers: map[string]string{"X-Forwarded-For": ip}}).Status
	}
	trusting := newEnv(t, withScenario("rate-limited"), func(o *emulator.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	if a, b, c := from(trusting, "192.0.2.1"), from(trusting, "192.0.2.1"), from(trusting, "192.0.2.2"); a != 401 || b != 429 || c != 401 {
		t.Errorf("behind a trusted proxy: %d %d %d, want 401 429 401 (one bucket per forwarded client)", a, b, c)
	}
	plain := newEnv(t, withScenario("rate-limited"))
	if a, b := from(plain, "192.0.2.1"), from(plain, "192.0.2.2"); a != 401 || b != 429 {
		t.Errorf("X-Forwarded-For from an untrusted peer: %d %d, want 401 429 (the peer's bucket)", a, b)
	}
}
