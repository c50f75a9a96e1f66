package cli

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// page is the content the deployments of these tests serve at /.
const page = "<h1>replayed</h1>"

// namespaceBundle is the file of a bundle of a namespace in a hostemu whose edge is
// plain HTTP on its one listener (as the JS testkit's start() runs it): a deployment
// serving page, ready. It returns the file and the deployment's url, which carries the
// namespace's label and the listener's port; the hostemu is gone by then, its port free.
func namespaceBundle(t *testing.T) (file, depURL string) {
	t.Helper()
	srv, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(t.Context())
	_, body := httpCall(t, srv.URL(), "POST", "/_emulator/namespaces", "", `{"clock":"manual"}`)
	var ns struct {
		Namespace string
		Tokens    struct{ Deploy string }
	}
	if err := json.Unmarshal(body, &ns); err != nil || ns.Tokens.Deploy == "" {
		t.Fatalf("a namespace: %s", body)
	}
	depURL = deployPage(t, srv.URL(), ns.Tokens.Deploy, "/_emulator/namespaces/"+ns.Namespace)
	label := strings.TrimPrefix(ns.Namespace, "ns_")
	if u, _ := url.Parse(depURL); u.Scheme != "http" || !strings.HasSuffix(u.Hostname(), "."+label+".hostemu.localhost") || u.Port() != portOf(t, srv.URL()) {
		t.Fatalf("the deployment's url %s is not on the namespace's http edge at %s", depURL, srv.URL())
	}
	_, tgz := httpCall(t, srv.URL(), "GET", "/_emulator/namespaces/"+ns.Namespace+"/bundle", "", "")
	file = filepath.Join(t.TempDir(), "TestShop.hostemu.tgz")
	if err := os.WriteFile(file, tgz, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, depURL
}

// deployPage uploads page and deploys it with token at base, in the world whose control
// API is under control, advances that world's clock until it is ready and returns its
// url.
func deployPage(t *testing.T, base, token, control string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(page))
	digest := hex.EncodeToString(sum[:])
	req, _ := http.NewRequest("POST", base+"/v1/files", strings.NewReader(page))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-File-Digest", digest)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 201 {
		t.Fatalf("POST /v1/files: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	code, body := httpCall(t, base, "POST", "/v1/deployments", token, `{"project_id":"prj_demo","files":{"index.html":"`+digest+`"}}`)
	var dep struct{ ID, URL string }
	if err := json.Unmarshal(body, &dep); err != nil || code != 201 {
		t.Fatalf("POST /v1/deployments: %d %s", code, body)
	}
	httpCall(t, base, "POST", control+"/clock/advance", "", `{"by":"1m"}`)
	return dep.URL
}

func portOf(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// openAt GETs rawURL as a browser would, its host and path as written, connecting to
// 127.0.0.1 at port (where *.localhost resolves), trusting only the CA in caPEM for
// https; it returns the status and the body.
func openAt(t *testing.T, rawURL, port string, caPEM []byte) (int, string) {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: waitLimit}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}}
	if caPEM != nil {
		tr.TLSClientConfig = trustOnly(t, caPEM)
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: waitLimit}
	res, err := c.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s at port %s: %v", rawURL, port, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A namespace's bundle, replayed, answers its deployments' hosts (the namespace's label
// in them) on the port its URLs carry: plain HTTP's own listener takes it, as HTTPS's
// does for https URLs, when --addr is left to its default; when that port is taken, a
// free one, and the replay says where.
func TestReplayOpensANamespacesURLs(t *testing.T) {
	t.Parallel()
	file, depURL := namespaceBundle(t)
	u, _ := url.Parse(depURL)
	// no --addr: the default, which moves to the URLs' port
	s := startCmd(t, nil, "replay", file)
	if got := portOf(t, s.url); got != u.Port() {
		t.Errorf("the replay listens on %s, not on the port its URLs carry (%s):\n%s", s.url, u.Port(), s.stdout)
	}
	if want := "HTTP on 127.0.0.1:" + u.Port() + ", the port its deployment URLs carry"; !strings.Contains(s.stdout.String(), want) {
		t.Errorf("stdout does not say %q:\n%s", want, s.stdout)
	}
	if code, body := openAt(t, depURL, u.Port(), nil); code != 200 || body != page {
		t.Errorf("GET %s: %d %.200s", depURL, code, body)
	}
	s.stop(t)

	// the port taken here: a free one, said
	hold, err := net.Listen("tcp", "127.0.0.1:"+u.Port())
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		// another test's listener took the port the replay just freed: taken all the same
		t.Logf("port %s was taken by another listener meanwhile: %v", u.Port(), err)
	case err != nil:
		t.Fatal(err)
	default:
		defer hold.Close()
	}
	s = startCmd(t, nil, "replay", file)
	m := regexp.MustCompile(`carry port ` + u.Port() + `, which is taken here: open them at port (\d+) \((\S+)\)`).FindStringSubmatch(s.stdout.String())
	if m == nil || m[1] != portOf(t, s.url) {
		t.Fatalf("stdout does not say where the URLs open:\n%s", s.stdout)
	}
	if want := "127.0.0.1:" + u.Port() + " was in use, so hostemu took a free port"; !strings.Contains(s.stdout.String(), want) {
		t.Errorf("the banner does not say %q:\n%s", want, s.stdout)
	}
	if code, body := openAt(t, m[2], m[1], nil); code != 200 || body != page {
		t.Errorf("GET %s: %d %.200s", m[2], code, body)
	}
}

// trustOnly is a TLS client configuration that trusts the CA in caPEM alone.
func trustOnly(t *testing.T, caPEM []byte) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("not a PEM certificate: %.100s", caPEM)
	}
	return &tls.Config{RootCAs: pool}
}

// Which address the listener of a bundle's URLs takes, or why it does not.
func TestEdgeAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args        []string
		scheme      string
		port        int
		addr, whyIs string
	}{
		{nil, "https", 41873, "127.0.0.1:41873", ""},
		{nil, "http", 45415, "127.0.0.1:45415", ""},
		{nil, "http", 4700, "127.0.0.1:4700", ""},  // the default's own: it says where it landed
		{nil, "https", 4743, "127.0.0.1:4743", ""}, // the same for HTTPS
		{nil, "http", 80, "", "below 1024"},
		{nil, "https", 443, "", "below 1024"},
		{[]string{"--addr", "127.0.0.1:0"}, "http", 45415, "", ""},      // the user's choice
		{[]string{"--tls-addr", "127.0.0.1:0"}, "https", 41873, "", ""}, // the user's choice
		{[]string{"--addr", "127.0.0.1:41873"}, "https", 41873, "", "--addr has it"},
		{[]string{"--control-addr", "127.0.0.1:45415"}, "http", 45415, "", "--control-addr has it"},
		{[]string{"--tls-addr", "127.0.0.1:45415"}, "http", 45415, "", "--tls-addr has it"},
		{nil, "http", 4743, "127.0.0.1:4743", ""}, // HTTPS's default moves out of the way
		{nil, "", 0, "", ""},
	} {
		c, err := Load(tc.args, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		addr, why := edgeAddr(&c, tc.scheme, tc.port)
		if addr != tc.addr || !strings.Contains(why, tc.whyIs) || (tc.whyIs == "") != (why == "") {
			t.Errorf("%v %s :%d: %q, %q; want %q and %q", tc.args, tc.scheme, tc.port, addr, why, tc.addr, tc.whyIs)
		}
	}
}
