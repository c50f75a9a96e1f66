package emulator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A web page of another origin can neither read nor drive the control API: no CORS
// headers, and 403 forbidden_origin for simple and preflighted requests alike. The
// world is untouched by a refused reset.
func TestControlRefusesForeignOrigins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	own := e.url // the emulator's own origin: http://127.0.0.1:port
	cases := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		want    int
	}{
		{"read state from another origin", "GET", "/_emulator/state", map[string]string{"Origin": "https://evil.example"}, 403},
		{"reset from another origin (no preflight)", "POST", "/_emulator/reset", map[string]string{"Origin": "https://evil.example"}, 403},
		{"reset from another local port", "POST", "/_emulator/reset", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"preflight from another origin", "OPTIONS", "/_emulator/reset", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403},
		{"opaque origin", "GET", "/_emulator/requests", map[string]string{"Origin": "null"}, 403},
		{"no-cors GET from another site", "GET", "/_emulator/state", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"no-cors GET from the same site, other port", "GET", "/_emulator/state", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"one fault from another origin", "GET", "/_emulator/faults/flt_1", map[string]string{"Origin": "https://evil.example"}, 403},
		{"health from another origin", "GET", "/_emulator/health", map[string]string{"Origin": "https://evil.example"}, 403},
		{"own origin", "GET", "/_emulator/clock", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin"}, 200},
		{"typed in the address bar", "GET", "/_emulator/clock", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"curl (no Origin)", "GET", "/_emulator/clock", nil, 200},
		{"docs are public", "GET", "/docs/errors", map[string]string{"Origin": "https://evil.example"}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(req{Method: tc.method, Path: tc.path, Headers: tc.headers})
			if r.Status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.want, r.Body)
			}
			if tc.want == 403 && r.Code() != "forbidden_origin" {
				t.Errorf("code %q, want forbidden_origin", r.Code())
			}
			for k := range r.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("control answer carries %s", k)
				}
			}
		})
	}
	// the refused reset changed nothing: a deployment made before it is still there
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	e.do(req{Method: "POST", Path: "/_emulator/reset", Headers: map[string]string{"Origin": "https://evil.example"}})
	mustStatus(t, e.get("/v1/deployments/"+id, "t-read"), 200)
}

// --control-origins lets a listed origin drive the control API, with a correct
// preflight; any other origin is still refused.
func TestControlOriginsAllowListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ControlOrigins = []string{"http://dash.test:5173"} })
	pre := e.do(req{Method: "OPTIONS", Path: "/_emulator/reset", Headers: map[string]string{
		"Origin": "http://dash.test:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, authorization"}})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "http://dash.test:5173" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		pre.Header.Get("Access-Control-Allow-Headers") != "content-type, authorization" {
		t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
	}
	r := e.do(req{Method: "GET", Path: "/_emulator/clock", Headers: map[string]string{"Origin": "http://dash.test:5173"}})
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "http://dash.test:5173" || !slices.Contains(r.Header.Values("Vary"), "Origin") {
		t.Fatalf("listed origin: %d %v", r.Status, r.Header)
	}
	if r := e.do(req{Method: "GET", Path: "/_emulator/clock", Headers: map[string]string{"Origin": "http://other.test"}}); r.Status != 403 {
		t.Fatalf("unlisted origin: %d", r.Status)
	}
}

// While hostemu listens on loopback, a control request naming a foreign host (a
// DNS-rebinding page whose name resolves to 127.0.0.1) is 403 forbidden_host; loopback
// names and --public-url's host pass.
func TestControlRefusesForeignHosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.PublicURL = "http://hostemu.ci:4700" })
	for _, tc := range []struct {
		host string
		want int
	}{
		{"rebind.evil.example", 403},
		{"rebind.evil.example:4700", 403},
		{"10.0.0.5:4700", 403},
		{"localhost:4700", 200},
		{"app.localhost", 403}, // *.localhost names are the edge's: a page may be served there
		{"x.pwn.localhost:4700", 403},
		{"127.0.0.1", 200},
		{"127.1.2.3:80", 200},
		{"[::1]:4700", 200},
		{"hostemu.ci:4700", 200},
	} {
		t.Run(tc.host, func(t *testing.T) {
			r := e.do(req{Method: "GET", Path: "/_emulator/state", Host: tc.host})
			if r.Status != tc.want || (tc.want == 403 && r.Code() != "forbidden_host") {
				t.Fatalf("Host %s: %d %s", tc.host, r.Status, r.Body)
			}
		})
	}
	// the public APIs keep answering any host: clients reach them by whatever name
	r := e.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Host: "rebind.evil.example"})
	mustStatus(t, r, 200)
}

// Listening beyond loopback, the host check is off (clients name the machine), and
// with no --control-token the start warns.
func TestControlBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, token string
		loopback    bool
		exposed     bool
	}{
		{"", "", true, false},
		{"127.0.0.1:4700", "", true, false},
		{"localhost:0", "", true, false},
		{"[::1]:4700", "", true, false},
		{"0.0.0.0:4700", "", false, true},
		{":4700", "", false, true},
		{"0.0.0.0:4700", "tok", false, false},
		{"192.0.2.10:4700", "", false, true},
	} {
		o := emulator.Options{Addr: tc.addr, ControlToken: tc.token}
		if o.LoopbackOnly() != tc.loopback || o.ControlExposed() != tc.exposed {
			t.Errorf("%q token %q: loopback %v exposed %v", tc.addr, tc.token, o.LoopbackOnly(), o.ControlExposed())
		}
	}
	e := newEnv(t, func(o *emulator.Options) { o.Addr = "0.0.0.0:0" })
	mustStatus(t, e.do(req{Method: "GET", Path: "/_emulator/clock", Host: "hostemu:4700"}), 200)
	if b := e.emu.Banner("http://127.0.0.1:4700", "http://127.0.0.1:4700"); !strings.Contains(b, "WARNING") || !strings.Contains(b, "--control-token") {
		t.Errorf("banner without the warning:\n%s", b)
	}
}

// The public APIs' CORS serves real front-end stacks: every requested header allowed,
// and with listed origins, credentialed requests.
func TestPublicCORS(t *testing.T) {
	t.Parallel()
	requested := "authorization, content-type, x-requested-with, traceparent, sentry-trace, baggage, idempotency-key"
	open := newEnv(t)
	pre := open.do(req{Method: "OPTIONS", Path: "/v1/deployments", Headers: map[string]string{
		"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": requested}})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || pre.Header.Get("Access-Control-Allow-Headers") != requested {
		t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
	}
	listed := newEnv(t, func(o *emulator.Options) { o.CORSOrigins = []string{"http://localhost:3000"} })
	pre = listed.do(req{Method: "OPTIONS", Path: "/v1/projects", Headers: map[string]string{
		"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": requested}})
	if pre.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || pre.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("listed preflight: %v", pre.Header)
	}
	r := listed.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "http://localhost:3000"}})
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Origin") {
		t.Fatalf("credentialed GET: %d %v", r.Status, r.Header)
	}
	if r := listed.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "http://evil.test"}}); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("an unlisted origin got %v", r.Header)
	}
}

// Every public answer that echoes an origin says it varies by Origin, whether or not it
// is compressed, so a shared cache never serves one origin's answer to another; it
// keeps varying by Accept-Encoding too.
func TestPublicCORSVariesByOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const origin = "http://localhost:5173"
	for _, tc := range []struct {
		name, path, token, encoding string
		status                      int
	}{
		{"200 uncompressed", "/v1/projects", "t-read", "identity", 200},
		{"200 gzip accepted", "/v1/projects", "t-read", "gzip", 200},
		{"401 uncompressed", "/v1/projects", "", "identity", 401},
		{"404 uncompressed", "/v1/deployments/dpl_nope", "t-read", "identity", 404},
		{"404 gzip accepted", "/v1/deployments/dpl_nope", "t-read", "gzip", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(req{Method: "GET", Path: tc.path, Token: tc.token, Headers: map[string]string{"Origin": origin, "Accept-Encoding": tc.encoding}})
			mustStatus(t, r, tc.status)
			if r.Header.Get("Access-Control-Allow-Origin") != origin {
				t.Fatalf("origin not echoed: %v", r.Header)
			}
			var vary []string
			for _, v := range r.Header.Values("Vary") {
				for _, f := range strings.Split(v, ",") {
					vary = append(vary, strings.TrimSpace(f))
				}
			}
			if !slices.Contains(vary, "Origin") || !slices.Contains(vary, "Accept-Encoding") {
				t.Errorf("Vary %q, want Origin and Accept-Encoding", r.Header.Values("Vary"))
			}
		})
	}
}

// The journal never holds an /v1/encrypt payload in clear: not when it is encrypted,
// not when the request is refused before its body is read, not in a malformed body.
func TestJournalRedactsEncryptPayloads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := "my-credit-card-4111111111111111"
	mustStatus(t, e.post("/v1/encrypt", "t-cipher", map[string]string{"payload": secret}), 200)
	mustStatus(t, e.post("/v1/encrypt", "", map[string]string{"payload": secret}), 401)
	mustStatus(t, e.post("/v1/encrypt", "t-cipher", `{"payload":"`+secret+`",}`), 400)
	r := e.get("/_emulator/requests?path=/v1/encrypt", "")
	mustStatus(t, r, 200)
	if strings.Contains(string(r.Body), "4111") {
		t.Fatalf("the journal holds the plaintext: %s", r.Body)
	}
	var got struct {
		Requests []struct{ Body string } `json:"requests"`
	}
	if err := jsonUnmarshal(r.Body, &got); err != nil || len(got.Requests) != 3 {
		t.Fatalf("journal: %v %s", err, r.Body)
	}
	want := []string{`{"payload":"[redacted: 31 characters]"}`, "[redacted]", "[redacted]"}
	for i, w := range want {
		if got.Requests[i].Body != w {
			t.Errorf("entry %d body %q, want %q", i, got.Requests[i].Body, w)
		}
	}
	// decrypt bodies hold only envelopes, which are kept as they came
	env := e.encrypt(t, secret)
	mustStatus(t, e.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": env}), 200)
	if r := e.get("/_emulator/requests?path=/v1/decrypt", ""); !strings.Contains(string(r.Body), env[:20]) {
		t.Errorf("decrypt body not journaled: %s", r.Body)
	}
}

// A payload sent to a path that is no cipher route but names one (a base URL with a
// trailing slash, another case, an escaped slash) is redacted too: redaction follows
// what the front door decides a request is, not the exact path.
func TestJournalRedactsMisspelledCipherPaths(t *testing.T) {
	t.Parallel()
	secret := "my-credit-card-4111111111111111"
	for name, e := range map[string]*env{
		"one listener":               newEnv(t),
		"cipher on its own listener": newEnv(t, func(o *emulator.Options) { o.CipherAddr = "127.0.0.1:0" }),
	} {
		t.Run(name, func(t *testing.T) {
			paths := []string{"/v1/encrypt/", "//v1/encrypt", "/v1//encrypt", "/V1/Encrypt", "/v1/encrypt%2F", "/v1/decrypt/", "/v2/encrypt"}
			if name != "one listener" {
				paths = append(paths, "/v1/encrypt") // not served here, and still a secret
			}
			for _, p := range paths {
				mustStatus(t, e.do(req{Method: "POST", Path: p, Token: "t-cipher", Body: map[string]string{"payload": secret}}), 404)
			}
			r := e.get("/_emulator/requests", "")
			if strings.Contains(string(r.Body), "4111") || strings.Count(string(r.Body), "[redacted") < len(paths) {
				t.Fatalf("the journal holds the plaintext: %s", r.Body)
			}
		})
	}
}

// --control-addr serves the control API on its own listener and takes it off --addr
// (health stays, for health checks); the banner names the addresses really listened on.
func TestControlAddr(t *testing.T) {
	t.Parallel()
	srv, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", ControlAddr: "127.0.0.1:0", Fixtures: "testdata/fixtures.yaml",
		ClockMode: emulator.ClockManual, ClockStart: testStart})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	main, control := &env{t: t, emu: srv.Emulator(), url: srv.URL()}, &env{t: t, emu: srv.Emulator(), url: srv.ControlURL()}
	if srv.ControlURL() == srv.URL() {
		t.Fatal("no control listener")
	}
	if r := main.get("/_emulator/state", ""); r.Status != 404 || r.Code() != "not_found" {
		t.Errorf("control route on --addr: %d %s", r.Status, r.Body)
	}
	mustStatus(t, main.get("/_emulator/health", ""), 200)
	mustStatus(t, main.get("/v1/projects", "t-read"), 200)
	mustStatus(t, control.get("/_emulator/state", ""), 200)
	if r := control.do(req{Method: "GET", Path: "/_emulator/state", Headers: map[string]string{"Origin": "https://evil.example"}}); r.Status != 403 {
		t.Errorf("foreign origin on the control listener: %d", r.Status)
	}
	if b := srv.Banner(); !strings.Contains(b, "control API      "+srv.ControlURL()+"/_emulator") || strings.Contains(b, "listening on") {
		t.Errorf("banner:\n%s", b)
	}

	wide, err := emulator.Listen(emulator.Options{Addr: "0.0.0.0:0", Fixtures: "testdata/fixtures.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wide.Shutdown(t.Context()) })
	if b := wide.Banner(); !strings.Contains(b, "listening on     ") || !strings.Contains(b, "beyond loopback") || !strings.Contains(b, "WARNING") {
		t.Errorf("banner of a wildcard listener:\n%s", b)
	}
}
