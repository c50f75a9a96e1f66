package cli

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// trustBundle is the file of a bundle whose manifest names edgeDomain and cors as the
// world's edge domain and CORS origins: what a bundle from someone's CI may say.
func trustBundle(t *testing.T, edgeDomain string, cors []string) string {
	t.Helper()
	// the clock at the wall time, so that certificates minted in the replay verify now
	e, err := emulator.New(emulator.Options{ClockMode: emulator.ClockManual, ClockStart: time.Now().UTC().Truncate(time.Second),
		EdgeDomain: edgeDomain, CORSOrigins: cors})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	defer func() { srv.Close(); e.Close() }()
	httpCall(t, srv.URL, "POST", "/v1/deployments", "hostemu-deploy", `{"project_id":"prj_demo","files":{}}`)
	_, b := httpCall(t, srv.URL, "GET", "/_emulator/bundle", "", "")
	file := filepath.Join(t.TempDir(), "fork.hostemu.tgz")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// httpsURL is the HTTPS listener a serving command printed in its banner.
var httpsURL = regexp.MustCompile(`(?m)^\s+HTTPS\s+(https://\S+)`)

// connectStatus is the status of CONNECT target sent to the plain listener at base.
func connectStatus(t *testing.T, base, target string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(waitLimit))
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return res.StatusCode
}

// handshake reports whether a TLS client that trusts only the CA of the replay at
// base verifies a certificate for name from its HTTPS listener at tlsURL.
func handshake(t *testing.T, base, tlsURL, name string) error {
	t.Helper()
	_, pemBytes := httpCall(t, base, "GET", "/_emulator/ca.pem", "", "")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("ca.pem: %s", pemBytes)
	}
	d := &net.Dialer{Timeout: waitLimit}
	c, err := tls.DialWithDialer(d, "tcp", strings.TrimPrefix(tlsURL, "https://"), &tls.Config{ServerName: name, RootCAs: pool})
	if err == nil {
		c.Close()
	}
	return err
}

// A replayed bundle never widens what this machine trusts: a manifest's edge domain
// that is a real name (github.com) does not make the kept CA sign names under it nor
// the proxy tunnel to them, and its CORS origins beyond loopback ones are not echoed;
// the replay says so. The same values given on the command line are the user's choice.
func TestReplayNeverWidensTrust(t *testing.T) {
	t.Parallel()
	file := trustBundle(t, "github.com", []string{"https://evil.test"})
	own := map[string]string{"HOSTEMU_CORS_ORIGINS": "http://localhost:5173"}
	s := startCmd(t, own, "replay", file, "--addr", "127.0.0.1:0")
	tlsURL := s.stdout.waitFor(t, httpsURL, s.done)[1]
	if err := handshake(t, s.url, tlsURL, "accounts.github.com"); err == nil {
		t.Error("the CA signed accounts.github.com for a bundle's edge domain")
	}
	if code := connectStatus(t, s.url, "accounts.github.com:443"); code != 403 {
		t.Errorf("CONNECT accounts.github.com:443: %d, want 403", code)
	}
	if err := handshake(t, s.url, tlsURL, "demo-shop-x.hostemu.localhost"); err != nil {
		t.Errorf("this process's own edge domain: %v", err)
	}
	req, _ := http.NewRequest("GET", s.url+"/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer hostemu-read")
	req.Header.Set("Origin", "https://evil.test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("a bundle's CORS origin is echoed: %q", got)
	}
	for _, want := range []string{
		`its edge domain "github.com" is not a test name`,
		`its CORS origins "https://evil.test" are not loopback origins`,
	} {
		if !strings.Contains(s.stdout.String(), want) {
			t.Errorf("stdout does not say %q:\n%s", want, s.stdout)
		}
	}

	// on the command line, the user's choice
	s = startCmd(t, nil, "replay", file, "--addr", "127.0.0.1:0", "--edge-domain", "github.com")
	if code := connectStatus(t, s.url, "accounts.github.com:443"); code != 200 {
		t.Errorf("CONNECT with --edge-domain github.com given: %d, want 200", code)
	}
	if strings.Contains(s.stdout.String(), "is not a test name") {
		t.Errorf("the flag was given, yet:\n%s", s.stdout)
	}
}

// A bundle's test edge domain and loopback CORS origins are replayed as they were.
func TestReplayKeepsTestNamesAndLoopbackOrigins(t *testing.T) {
	t.Parallel()
	file := trustBundle(t, "shop.test", []string{"http://localhost:3000", "http://127.0.0.1:8080"})
	s := startCmd(t, map[string]string{"HOSTEMU_CORS_ORIGINS": "http://localhost:5173"}, "replay", file, "--addr", "127.0.0.1:0")
	if code := connectStatus(t, s.url, "demo-shop-x.shop.test:443"); code != 200 {
		t.Errorf("CONNECT under the bundle's test edge domain: %d, want 200", code)
	}
	req, _ := http.NewRequest("GET", s.url+"/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer hostemu-read")
	req.Header.Set("Origin", "http://localhost:3000")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "http://localhost:3000" {
		t.Errorf("a bundle's loopback origin: %q", got)
	}
	if out := s.stdout.String(); strings.Contains(out, "not a test name") || strings.Contains(out, "not loopback") {
		t.Errorf("nothing to say, yet:\n%s", out)
	}
}

// Which of a manifest's settings a replay takes, and what it says of the others.
func TestBundleTrust(t *testing.T) {
	t.Parallel()
	own, err := Load(nil, env(map[string]string{"HOSTEMU_CORS_ORIGINS": "http://localhost:5173"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edge  string
		cors  []string
		flags string
		notes int
	}{
		{"hostemu.localhost", []string{"http://localhost:3000"}, "--edge-domain hostemu.localhost --cors-origins http://localhost:3000", 0},
		{"shop.test", []string{"http://127.0.0.1:8080", "https://[::1]"}, "--edge-domain shop.test --cors-origins http://127.0.0.1:8080,https://[::1]", 0},
		{"www.example.org", nil, "--edge-domain www.example.org", 0},
		{"github.com", nil, "", 1},
		{"example.com.evil.io", nil, "", 1},
		{"localhost.evil.io", nil, "", 1},
		{"not a domain", nil, "", 1},
		{"", []string{"*"}, "", 1},
		{"", []string{"http://app.localhost:3000"}, "", 1}, // the edge serves pages there
		{"", []string{"http://localhost:3000", "https://evil.test"}, "", 1},
		{"", []string{"http://localhost:5173"}, "--cors-origins http://localhost:5173", 0},
		{"", []string{"HTTP://LOCALHOST:5173/"}, "", 0}, // not an origin as written, but the same as this process's
	} {
		flags, notes := bundleTrust(emulator.BundleManifest{EdgeDomain: tc.edge, CORSOrigins: tc.cors}, own, true)
		if got := strings.Join(flags, " "); got != tc.flags || len(notes) != tc.notes {
			t.Errorf("edge %q, cors %q: flags %q, notes %q; want %q and %d notes", tc.edge, tc.cors, got, notes, tc.flags, tc.notes)
		}
	}
	// given on the command line: the user's choice, nothing taken, nothing said
	given, _ := Load([]string{"--edge-domain", "shop.test", "--cors-origins", "*"}, env(nil))
	if flags, notes := bundleTrust(emulator.BundleManifest{EdgeDomain: "github.com", CORSOrigins: []string{"https://evil.test"}}, given, true); len(flags)+len(notes) != 0 {
		t.Errorf("flags %q, notes %q", flags, notes)
	}
}

// URLs without a port (443 behind a reverse proxy, --edge-url-port) ask nothing of the
// replay's listeners: no port to take, nothing to say.
func TestURLPortOnlyWhenNamed(t *testing.T) {
	for in, want := range map[string]int{
		"https://demo-x.hostemu.localhost":       0,
		"http://demo-x.hostemu.localhost":        0,
		"https://demo-x.hostemu.localhost:4743":  4743,
		"http://demo-x.ns1.hostemu.localhost:80": 80,
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := urlPort(u); got != want {
			t.Errorf("urlPort(%s) = %d, want %d", in, got, want)
		}
	}
}
