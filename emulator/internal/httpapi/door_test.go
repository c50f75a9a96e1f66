package httpapi

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// newDoorTestAPI serves a world with a ready deployment (demo-abc.hostemu.localhost), an
// active custom domain under a reserved name (shop.test) and one with a real name
// (github.com), both serving it, and a read token "t".
func newDoorTestAPI(tb testing.TB, cfg Config) *API {
	tb.Helper()
	reg, err := scenario.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	issuer, exp := "Door CA", at.Add(60*24*time.Hour)
	issued := state.TLS{Status: state.TLSIssued, ExpiresAt: &exp, Issuer: &issuer}
	w, err := world.New(world.Config{Scenarios: reg, ClockMode: clock.Manual, ClockStart: at, Fixtures: func() (state.Snapshot, error) {
		return state.Snapshot{
			Tokens:   []state.Token{{Token: "t", Scope: state.ScopeRead}},
			Projects: []state.Project{{ID: "prj_a", Name: "demo", CreatedAt: at, ProductionDeploymentID: "dpl_abc"}},
			Deployments: []state.Deployment{{ID: "dpl_abc", ProjectID: "prj_a", URL: "https://demo-abc.hostemu.localhost", Target: "production",
				Status: state.StatusReady, CreatedAt: at, Files: map[string]string{"index.html": strings.Repeat("a", 64)},
				Timings: state.Timings{QueuedAt: &at, BuildingAt: &at, ReadyAt: &at}}},
			Domains: []state.Domain{
				{Hostname: "shop.test", ProjectID: "prj_a", Status: state.StatusActive, CreatedAt: at, TLS: issued},
				{Hostname: "github.com", ProjectID: "prj_a", Status: state.StatusActive, CreatedAt: at, TLS: issued},
			},
		}, nil
	}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close)
	return New(w, cfg)
}

// The front door decides once what every kind of request is, from the listener, the
// method, the host and the path.
func TestFrontDoorClassifies(t *testing.T) {
	a := newDoorTestAPI(t, Config{PublicURL: "http://emu.example:4700"})
	sep := newDoorTestAPI(t, Config{CipherSeparate: true, ControlSeparate: true})
	for _, tc := range []struct {
		name     string
		a        *API
		listener Listener
		method   string
		target   string // a path, or an absolute URL (a proxy request), or host:port (CONNECT)
		host     string
		want     Kind
		proxy    bool
	}{
		{"hosting API", a, ListenerMain, "GET", "/v1/deployments/dpl_abc", "127.0.0.1:4700", KindHosting, false},
		{"hosting API, unknown route", a, ListenerMain, "GET", "/v1/deployment", "localhost:4700", KindHosting, false},
		{"decryption API", a, ListenerMain, "POST", "/v1/encrypt", "127.0.0.1:4700", KindCipher, false},
		{"encrypt, misspelled", a, ListenerMain, "POST", "/V1/Encrypt", "127.0.0.1:4700", KindCipher, false},
		{"encrypt, trailing slash", a, ListenerMain, "POST", "/v1/encrypt/", "127.0.0.1:4700", KindCipher, false},
		{"encrypt, doubled slash", a, ListenerMain, "POST", "//v1/encrypt", "127.0.0.1:4700", KindCipher, false},
		{"health", a, ListenerMain, "GET", "/_emulator/health", "127.0.0.1:4700", KindHealth, false},
		{"control", a, ListenerMain, "POST", "/_emulator/reset", "127.0.0.1:4700", KindControl, false},
		{"control, namespaced", a, ListenerMain, "GET", "/_emulator/namespaces/ns_x/clock", "[::1]:4700", KindControl, false},
		{"dashboard", a, ListenerMain, "GET", "/dashboard", "127.0.0.1:4700", KindPage, false},
		{"landing page", a, ListenerMain, "GET", "/", "localhost:4700", KindPage, false},
		{"dashboard asset", a, ListenerMain, "GET", "/dashboard/assets/api.js", "127.0.0.1:4700", KindPage, false},
		{"tokens page", a, ListenerMain, "GET", "/account/tokens", "127.0.0.1:4700", KindPage, false},
		{"docs", a, ListenerMain, "GET", "/docs/errors/not_found", "127.0.0.1:4700", KindDocs, false},
		{"openapi", a, ListenerMain, "GET", "/openapi.json", "127.0.0.1:4700", KindDocs, false},
		{"openapi yaml on the cipher listener", a, ListenerCipher, "GET", "/openapi.yaml", "127.0.0.1:4700", KindDocs, false},
		{"no such path", a, ListenerMain, "GET", "/favicon.ico", "127.0.0.1:4700", KindNotFound, false},
		{"escaped slash after /v1: no route", a, ListenerMain, "GET", "/v1%2Fprojects", "127.0.0.1:4700", KindNotFound, false},
		{"escaped slash after /_emulator: no health", a, ListenerMain, "GET", "/_emulator%2Fhealth", "127.0.0.1:4700", KindNotFound, false},
		{"encrypt, escaped slash", a, ListenerMain, "POST", "/v1%2Fencrypt", "127.0.0.1:4700", KindCipher, false},
		{"edge by deployment host", a, ListenerMain, "GET", "/", "demo-abc.hostemu.localhost:4700", KindEdge, false},
		{"edge by deployment host, API path", a, ListenerMain, "GET", "/v1/projects", "demo-abc.hostemu.localhost", KindEdge, false},
		{"edge by unknown deployment host", a, ListenerMain, "GET", "/", "nope-x.hostemu.localhost", KindEdge, false},
		{"edge by custom domain", a, ListenerMain, "GET", "/about", "shop.test", KindEdge, false},
		{"absolute-form proxy, deployment", a, ListenerMain, "GET", "http://demo-abc.hostemu.localhost/", "demo-abc.hostemu.localhost", KindEdge, true},
		{"absolute-form proxy, foreign host", a, ListenerMain, "GET", "http://example.org/", "example.org", KindEdge, true},
		{"absolute-form proxy, hostemu itself", a, ListenerMain, "GET", "http://127.0.0.1:4700/v1/projects", "127.0.0.1:4700", KindHosting, true},
		{"CONNECT", a, ListenerMain, "CONNECT", "shop.test:443", "shop.test:443", KindTunnel, true},
		{"foreign host, API path", a, ListenerMain, "GET", "/v1/projects", "api.example.org", KindHosting, false},
		{"rebinding host, control path", a, ListenerMain, "GET", "/_emulator/state", "rebind.evil.example", KindControl, false},
		{"--public-url host", a, ListenerMain, "GET", "/_emulator/clock", "emu.example:4700", KindControl, false},
		{"separate cipher listener: cipher", sep, ListenerCipher, "POST", "/v1/decrypt", "127.0.0.1:4701", KindCipher, false},
		{"separate cipher listener: hosting", sep, ListenerCipher, "GET", "/v1/projects", "127.0.0.1:4701", KindNotFound, false},
		{"separate cipher listener: health", sep, ListenerCipher, "GET", "/_emulator/health", "127.0.0.1:4701", KindHealth, false},
		{"main listener without the cipher", sep, ListenerMain, "POST", "/v1/decrypt", "127.0.0.1:4700", KindNotFound, false},
		{"main listener without the control API", sep, ListenerMain, "POST", "/_emulator/reset", "127.0.0.1:4700", KindNotFound, false},
		{"main listener keeps health", sep, ListenerMain, "GET", "/_emulator/health", "127.0.0.1:4700", KindHealth, false},
		{"control listener: control", sep, ListenerControl, "GET", "/_emulator/clock", "127.0.0.1:4702", KindControl, false},
		{"control listener: no edge", sep, ListenerControl, "GET", "/", "demo-abc.hostemu.localhost", KindPage, false},
		{"control listener: no CONNECT", sep, ListenerControl, "CONNECT", "shop.test:443", "shop.test:443", KindNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			r.Host = tc.host
			if tc.method == "CONNECT" {
				r.RequestURI, r.URL.Path = tc.target, ""
			}
			cls := tc.a.Classify(r, tc.listener)
			if cls.Kind != tc.want || cls.Proxy != tc.proxy {
				t.Fatalf("%s %s (Host %s) on listener %d: %s proxy=%v, want %s proxy=%v", tc.method, tc.target, tc.host, tc.listener, cls.Kind, cls.Proxy, tc.want, tc.proxy)
			}
			if cls.Kind == KindEdge && cls.World == nil {
				t.Fatal("an edge request without its world")
			}
		})
	}
}

// routePath reads a path's segments as the router does: an escaped slash stays in its
// segment (as %2F), every other escape is decoded, and a path without an escaped slash
// is URL.Path itself.
func TestRoutePath(t *testing.T) {
	for target, want := range map[string]string{
		"/v1/deployments/dpl_x":               "/v1/deployments/dpl_x",
		"/v1/deployments/dpl%5Fx/promote":     "/v1/deployments/dpl_x/promote",
		"/v1/deployments/dpl_x%2Fpromote":     "/v1/deployments/dpl_x%2Fpromote",
		"/v1/deployments/dpl_x%2fpromote":     "/v1/deployments/dpl_x%2Fpromote",
		"/v1/deployments/a%20b%2F%41":         "/v1/deployments/a b%2FA",
		"/v1/deployments/a%25%2Fb":            "/v1/deployments/a%25%2Fb",
		"/v1%2Fdeployments":                   "/v1%2Fdeployments",
		"/v1/deployments/dpl%252F":            "/v1/deployments/dpl%252F", // a percent sign, not an escaped slash
		"/v1/deployments/100%25":              "/v1/deployments/100%25",
		"/v1/deployments/%25%25":              "/v1/deployments/%25%25",
		"/v1/projects/p%2F/domains/x.test%2F": "/v1/projects/p%2F/domains/x.test%2F",
	} {
		r := httptest.NewRequest("GET", target, nil)
		if got := routePath(r.URL); got != want {
			t.Errorf("%s: %q, want %q", target, got, want)
		}
	}
}

// Every route sits under the prefix of the kind the front door gives its path: a route
// registered where the door would send its requests elsewhere could never be reached.
func TestRoutesAreClassifiedAsRegistered(t *testing.T) {
	a := newTestAPI(t)
	for _, rt := range a.engine.Routes() {
		path := strings.NewReplacer(":id", "dpl_x", ":project_id", "prj_x", ":hostname", "shop.test", ":ns", "ns_x",
			":token", "tok", ":code", "not_found", ":file", "api.js").Replace(rt.Path)
		k := kindOfPath(path, rt.Method)
		if k == KindNotFound {
			t.Errorf("%s %s: the front door sends it nowhere", rt.Method, rt.Path)
		}
		if (k == KindCipher) != (rt.Path == "/v1/encrypt" || rt.Path == "/v1/decrypt") {
			t.Errorf("%s %s: classified %s", rt.Method, rt.Path, k)
		}
	}
}

// A panic at the edge answers the documented 500 (an edge error page, or the envelope
// for a client preferring JSON), and the journal records it.
func TestEdgePanicIsTheDocumented500(t *testing.T) {
	a := newDoorTestAPI(t, Config{})
	for accept, wantJSON := range map[string]bool{"application/json": true, "text/html": false} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = "shop.test"
		r.Header.Set("Accept", accept)
		rec := &panicOnceWriter{ResponseRecorder: httptest.NewRecorder()}
		a.Handler().ServeHTTP(rec, r)
		var body struct {
			Error struct{ Code, Message string }
		}
		err := json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != 500 || rec.Header().Get("X-Hostemu-Error") != "internal_error" || (err == nil) != wantJSON ||
			(wantJSON && body.Error.Code != "internal_error") || (!wantJSON && !strings.Contains(rec.Body.String(), "internal_error")) {
			t.Fatalf("Accept %s: a panic at the edge answered %d %s %v", accept, rec.Code, rec.Body, rec.Header())
		}
	}
	es := a.w.Requests(journal.Filter{Path: "/"})
	if len(es) != 2 || es[0].Status != 500 || es[0].Service != "edge" || es[0].ErrorCode != "internal_error" {
		t.Fatalf("journal %+v", es)
	}
}

// panicOnceWriter panics the first time a handler asks for its headers: the edge does
// first thing, before it writes.
type panicOnceWriter struct {
	*httptest.ResponseRecorder
	asked bool
}

func (w *panicOnceWriter) Header() http.Header {
	if !w.asked {
		w.asked = true
		panic("boom at the edge")
	}
	return w.ResponseRecorder.Header()
}

// The proxy vouches only for deployment hosts and reserved test names, unless
// --proxy-domains lists a real name: attaching github.com to a project must not make the
// local CA serve it to clients that use hostemu as their proxy.
func TestProxyVouchesOnlyForTestNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		domains []string
		host    string
		want    int
	}{
		{"deployment host", nil, "demo-abc.hostemu.localhost", 200},
		{"reserved name", nil, "shop.test", 200},
		{"real name", nil, "github.com", 403},
		{"real name listed", []string{"github.com"}, "github.com", 200},
		{"real name under a listed suffix", []string{".com"}, "github.com", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newDoorTestAPI(t, Config{ProxyDomains: tc.domains})
			r := httptest.NewRequest("GET", "http://"+tc.host+"/", nil)
			rec := httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, r)
			if rec.Code != tc.want {
				t.Fatalf("proxy GET http://%s/: %d %s", tc.host, rec.Code, rec.Body)
			}
			if tc.want == 403 && (rec.Header().Get("X-Hostemu-Error") != "unknown_host" || !strings.Contains(rec.Body.String(), "--proxy-domains")) {
				t.Fatalf("refusal %v %s", rec.Header(), rec.Body)
			}
			// the API still answers for the domain by Host header: that needs a deliberate client
			r = httptest.NewRequest("GET", "/", nil)
			r.Host = tc.host
			rec = httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, r)
			if rec.Code != 200 {
				t.Fatalf("GET / with Host %s: %d %s", tc.host, rec.Code, rec.Body)
			}
		})
	}
	// CONNECT as well, over a real connection
	a := newDoorTestAPI(t, Config{})
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for host, want := range map[string]string{"github.com:443": "403", "shop.test:443": "200"} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("CONNECT " + host + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, " "+want+" ") {
			t.Errorf("CONNECT %s: %q, want %s", host, line, want)
		}
	}
}

// ownHost remembers the last host it parsed as an IP address: the answers are those of
// the parse whatever the order of the hosts asked about.
func TestOwnHostRemembersAnIPAddress(t *testing.T) {
	a := &API{publicHost: "emu.example"}
	for _, tt := range []struct {
		host string
		own  bool
	}{
		{"127.0.0.1", true}, {"127.0.0.1", true}, {"shop.hostemu.localhost", false}, {"127.0.0.1", true},
		{"::1", true}, {"127.0.0.2", true}, {"127.0.0.1x", false}, {"emu.example", true}, {"", true},
		{"localhost", true}, {"10.0.0.1", true}, {"demo-shop.localhost", false}, {"10.0.0.1", true},
	} {
		if got := a.ownHost(tt.host); got != tt.own {
			t.Errorf("ownHost(%q) = %v, want %v", tt.host, got, tt.own)
		}
	}
}

// A CONNECT port is 1 to 65535 in plain decimal digits: strconv.Atoi would take a sign
// and leading zeros.
func TestConnectPortOK(t *testing.T) {
	for target, want := range map[string]bool{
		"h:1": true, "h:80": true, "h:65535": true, "[::1]:443": true, "h:10000": true,
		"h:0": false, "h:65536": false, "h:99999": false, "h:": false, "h": false, "h:+80": false, "h:-1": false,
		"h:0080": false, "h:00": false, "h:080": false, "h:8 0": false, "h:٨٠": false, "h:1e3": false, "h:0x50": false, "h:100000": false,
	} {
		if got := connectPortOK(target); got != want {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
	}
}
