package emulator_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// localhostClient is a browser's view of the network: it trusts the emulator's CA alone
// (at the emulator's time), and resolves every *.localhost name to loopback as RFC 6761
// and browsers do, keeping the URL's port. Nothing else is rewritten: it opens a URL as
// given, or fails as a browser would.
func (e *tlsEnv) localhostClient() *http.Client {
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.emu.CACertPool(), Time: e.emu.Now},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if host == "localhost" || strings.HasSuffix(host, ".localhost") {
				host = "127.0.0.1"
			}
			return (&net.Dialer{Timeout: ioTimeout}).DialContext(ctx, network, net.JoinHostPort(host, port))
		},
	}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: ioTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func portOfURL(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// The url the API hands out opens as given over HTTPS: it carries the HTTPS listener's
// port, and a client that trusts only the CA gets the deployment's content.
func TestDeploymentURLOpensAsGiven(t *testing.T) {
	t.Parallel()
	e := newTLSEnv(t)
	tlsPort := portOfURL(t, e.srv.TLSURL())
	content := "<h1>opens as given</h1>"
	h := e.upload(t, content)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": h}})
	mustStatus(t, r, 201)
	created := decode[emulator.DeploymentCreated](t, r)
	if !strings.HasPrefix(created.URL, "https://shop-") || portOfURL(t, created.URL) != tlsPort {
		t.Fatalf("url %s: want https://shop-…:%s", created.URL, tlsPort)
	}
	e.advance("6s")
	res, err := e.localhostClient().Get(created.URL)
	if err != nil {
		t.Fatalf("GET %s: %v", created.URL, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != content || res.Header.Get("X-Hostemu-Deployment") != created.ID {
		t.Errorf("GET %s: %d %q %v", created.URL, res.StatusCode, body, res.Header)
	}
	// the fixtures' deployments, and their build logs, say the same
	d := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_first", "t-read"))
	if portOfURL(t, d.URL) != tlsPort || !strings.HasPrefix(d.URL, "https://") {
		t.Errorf("fixture deployment url %s", d.URL)
	}
	res, err = e.localhostClient().Get(d.URL)
	if err != nil || res.StatusCode != 200 {
		t.Errorf("GET %s: %v %v", d.URL, err, res)
	} else {
		res.Body.Close()
	}
}

// Deployment URLs name the port to open them at: --edge-url-port when given; with no
// HTTPS listener, the plain one's, over http.
func TestDeploymentURLForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   func(*emulator.Options)
		scheme string
		port   func(*emulator.Server) string
	}{
		{"edge-url-port", func(o *emulator.Options) { o.EdgeURLPort = 8443 }, "https", func(*emulator.Server) string { return "8443" }},
		{"edge-url-port 443", func(o *emulator.Options) { o.EdgeURLPort = 443 }, "https", func(*emulator.Server) string { return "" }},
		{"no HTTPS", func(o *emulator.Options) { o.TLSAddr = "" }, "http", func(s *emulator.Server) string { return portOfURL(t, s.URL()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTLSEnv(t, tc.opts)
			created := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": digestOf("x")}}))
			u, err := url.Parse(created.URL)
			if err != nil || u.Scheme != tc.scheme || u.Port() != tc.port(e.srv) {
				t.Errorf("url %s: want %s with port %q", created.URL, tc.scheme, tc.port(e.srv))
			}
		})
	}
	// with no HTTPS listener, the url opens over plain HTTP
	e := newTLSEnv(t, func(o *emulator.Options) { o.TLSAddr = "" })
	d := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_first", "t-read"))
	res, err := e.localhostClient().Get(d.URL)
	if err != nil || res.StatusCode != 200 || res.Header.Get("X-Hostemu-Deployment") != "dpl_first" {
		t.Fatalf("GET %s: %v %v", d.URL, err, res)
	}
	res.Body.Close()
}

// The default HTTPS address, when taken, gives way to a free port that the banner and
// the URLs name; an address the user chose stays an error.
func TestTLSAddrFallback(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	if _, err := emulator.Listen(emulator.Options{TLSAddr: addr}); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Listen on a taken --tls-addr: %v, want address already in use", err)
	}
	e := newTLSEnv(t, func(o *emulator.Options) { o.TLSAddr, o.TLSAddrFallback = addr, true })
	port := portOfURL(t, e.srv.TLSURL())
	if port == strconv.Itoa(taken.Addr().(*net.TCPAddr).Port) {
		t.Fatalf("TLS URL %s on the taken port", e.srv.TLSURL())
	}
	if b := e.srv.Banner(); !strings.Contains(b, e.srv.TLSURL()) || !strings.Contains(b, addr+" was in use") || !strings.Contains(b, "hostemu.localhost:"+port+"/") {
		t.Errorf("banner does not name the HTTPS port taken:\n%s", b)
	}
	if d := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_first", "t-read")); portOfURL(t, d.URL) != port {
		t.Errorf("url %s, want port %s", d.URL, port)
	}
}

// A domain's 308 keeps the port the client must use: the one it came in on over HTTPS,
// the HTTPS listener's from the plain listener, none through the proxy.
func TestRedirectKeepsThePort(t *testing.T) {
	t.Parallel()
	e := newTLSEnv(t)
	tlsPort := portOfURL(t, e.srv.TLSURL())
	if r := e.edgeGet("www.shop.test:"+portOfURL(t, e.url), "/a?b=1", nil); r.Status != 308 || r.Header.Get("Location") != "https://shop.test:"+tlsPort+"/a?b=1" {
		t.Errorf("on the plain listener: %d %q", r.Status, r.Header.Get("Location"))
	}
	req, _ := http.NewRequest("GET", e.srv.TLSURL()+"/a?b=1", nil)
	req.Host = "www.shop.test:" + tlsPort
	res, err := e.localhostClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 308 || res.Header.Get("Location") != "https://shop.test:"+tlsPort+"/a?b=1" {
		t.Errorf("over HTTPS: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	proxyURL, _ := url.Parse(e.url)
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = viaProxy.Get("http://www.shop.test/a")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 308 || res.Header.Get("Location") != "https://shop.test/a" {
		t.Errorf("through the proxy: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// proxyClient uses the emulator's plain listener as its proxy (https through CONNECT
// tunnels), trusting the CA alone.
func (e *tlsEnv) proxyClient() *http.Client {
	proxy, err := url.Parse(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: e.emu.CACertPool(), Time: e.emu.Now}}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: ioTimeout}
}

// getJSON fetches u with c (Accept: application/json, the read token) and decodes the
// answer into v.
func getJSON(t *testing.T, c *http.Client, u string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer t-read")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if err := jsonUnmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return res.StatusCode
}

// doc_url, build_logs_url and the edge's error links use the scheme, host and port the
// client used; through a CONNECT tunnel, which speaks TLS on a listener that speaks
// plain HTTP, the HTTPS listener (or, with none, the plain listener over http). Every
// link opens.
func TestLinksFollowHowTheRequestArrived(t *testing.T) {
	t.Parallel()
	type errBody struct {
		Error struct {
			Code   string `json:"code"`
			DocURL string `json:"doc_url"`
		} `json:"error"`
	}
	for _, tlsOn := range []bool{true, false} {
		name := "HTTPS on"
		if !tlsOn {
			name = "HTTPS off"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTLSEnv(t, func(o *emulator.Options) {
				if !tlsOn {
					o.TLSAddr = ""
				}
			})
			tunnelBase := e.srv.TLSURL()
			if !tlsOn {
				tunnelBase = e.url
			}
			dep := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_first", "t-read"))
			u, _ := url.Parse(dep.URL)
			missingHost := strings.Replace(u.Hostname(), "first", "nosuch", 1)
			type arrival struct {
				name, api, edge string // the API's base and an edge URL, as the client asks
				client          *http.Client
				want            string // where links must point
				edgeWant        string // where an edge error's links point: the listener's address, its host being the edge's
			}
			arrivals := []arrival{
				{"plain listener", e.url, "http://" + missingHost + ":" + portOfURL(t, e.url), e.localhostClient(), e.url, e.url},
				{"proxy, absolute form", "http://localhost:" + portOfURL(t, e.url), "http://" + missingHost, e.proxyClient(), "http://localhost:" + portOfURL(t, e.url), e.url},
				{"CONNECT tunnel", "https://localhost:" + portOfURL(t, e.url), "https://" + missingHost, e.proxyClient(), tunnelBase, tunnelBase},
			}
			if tlsOn {
				arrivals = append(arrivals, arrival{"HTTPS listener", "https://localhost:" + portOfURL(t, e.srv.TLSURL()), "https://" + missingHost + ":" + portOfURL(t, e.srv.TLSURL()), e.localhostClient(), "https://localhost:" + portOfURL(t, e.srv.TLSURL()), e.srv.TLSURL()})
			}
			for _, a := range arrivals {
				var apiErr, edgeErr errBody
				getJSON(t, a.client, a.api+"/v1/nope", &apiErr)
				var d emulator.Deployment
				getJSON(t, a.client, a.api+"/v1/deployments/dpl_first", &d)
				getJSON(t, a.client, a.edge+"/", &edgeErr)
				for _, l := range []struct{ what, got, want string }{
					{"API doc_url", apiErr.Error.DocURL, a.want + "/docs/errors/not_found"},
					{"build_logs_url", d.BuildLogsURL, a.want + "/v1/deployments/dpl_first/logs"},
					{"edge doc_url", edgeErr.Error.DocURL, a.edgeWant + "/docs/errors/deployment_not_found"},
				} {
					if l.got != l.want {
						t.Errorf("%s: %s %q, want %q", a.name, l.what, l.got, l.want)
						continue
					}
					// the link opens, from this machine, with no proxy
					req, _ := http.NewRequest("GET", l.got, nil)
					req.Header.Set("Authorization", "Bearer t-read")
					res, err := e.localhostClient().Do(req)
					if err != nil || res.StatusCode != 200 {
						t.Errorf("%s: %s %s does not open: %v %v", a.name, l.what, l.got, err, res)
						continue
					}
					res.Body.Close()
				}
			}
		})
	}
}
