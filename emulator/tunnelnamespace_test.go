package emulator_test

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A CONNECT tunnel serves the namespace its CONNECT named (X-Hostemu-Namespace or proxy
// credentials) while that namespace lives: once it is deleted, a request on the tunnel
// still open is 404 namespace_not_found, as a new CONNECT naming it is, and as the edge
// answers a request naming it. The tunnel kept the world it was opened with and went on
// serving the deleted namespace's domains.
func TestTunnelOfADeletedNamespaceIsNotFound(t *testing.T) {
	t.Parallel()
	e := newTLSEnv(t)
	const host = "tun.example.test" // a custom domain of the namespace alone
	for _, tc := range []struct {
		name   string
		header func(ns string) (string, string)
	}{
		{"X-Hostemu-Namespace", func(ns string) (string, string) { return "X-Hostemu-Namespace", ns }},
		{"Proxy-Authorization", func(ns string) (string, string) {
			return "Proxy-Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(ns+":"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := e.newNamespace(t, nil)
			mustStatus(t, e.post("/v1/projects/prj_shop/domains", n.Tokens.Admin, map[string]any{"hostname": host}), 201)
			mustStatus(t, e.post(n.control("/domains/"+host+"/status"), "", map[string]string{"status": "active"}), 200)
			k, v := tc.header(n.Namespace)
			c, br := openTunnel(t, e, host+":80", k+": "+v)
			inner := func() *http.Response { t.Helper(); return getOnTunnel(t, c, br, host) }
			if res := inner(); res.StatusCode != 200 {
				t.Fatalf("the namespace's domain through its tunnel: %s %s", res.Status, res.Header.Get("X-Hostemu-Error"))
			}
			mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + n.Namespace}), 200)
			res := inner()
			if res.StatusCode != 404 || res.Header.Get("X-Hostemu-Error") != "namespace_not_found" {
				t.Errorf("the tunnel, its namespace deleted: %s %q, want 404 namespace_not_found", res.Status, res.Header.Get("X-Hostemu-Error"))
			}
			if _, _, res := connectWith(t, e, host+":80", k+": "+v); res.StatusCode != 404 {
				t.Errorf("a new CONNECT naming it: %s", res.Status)
			}
		})
	}
}

// A tunnel's namespace that is gone, its bundle replayed into another namespace (its
// name then stands for that one, as its tokens and deployment hosts do: "the test's
// client works as is"), is answered on the tunnel as a new CONNECT naming it is: by the
// replayed world. The tunnel was refused with namespace_not_found, its name said to
// name no namespace, while a new CONNECT naming it was served.
func TestTunnelFollowsItsNamespaceIntoAReplay(t *testing.T) {
	t.Parallel()
	e := newTLSEnv(t)
	const host = "tun.example.test" // a custom domain of the namespace alone
	a := e.newNamespace(t, nil)
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", a.Tokens.Admin, map[string]any{"hostname": host}), 201)
	mustStatus(t, e.post(a.control("/domains/"+host+"/status"), "", map[string]string{"status": "active"}), 200)
	header := "X-Hostemu-Namespace: " + a.Namespace
	c, br := openTunnel(t, e, host+":80", header)
	if res := getOnTunnel(t, c, br, host); res.StatusCode != 200 {
		t.Fatalf("the namespace's domain through its tunnel: %s %s", res.Status, res.Header.Get("X-Hostemu-Error"))
	}
	bundle := e.get(a.control("/bundle"), "")
	mustStatus(t, bundle, 200)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + a.Namespace}), 200)
	b := e.newNamespace(t, nil)
	mustStatus(t, e.putBundle(b.control("/bundle"), bundle.Body), 200)
	if _, _, res := connectWith(t, e, host+":80", header); res.StatusCode != 200 {
		t.Fatalf("a new CONNECT naming %s, replayed into %s: %s", a.Namespace, b.Namespace, res.Status)
	}
	if res := getOnTunnel(t, c, br, host); res.StatusCode != 200 {
		t.Errorf("the tunnel opened for %s, replayed into %s: %s %q, want 200 as a new CONNECT", a.Namespace, b.Namespace, res.Status, res.Header.Get("X-Hostemu-Error"))
	}
}

// getOnTunnel sends GET / for host on the tunnel c (read by br) and returns the answer,
// its body read.
func getOnTunnel(t *testing.T, c net.Conn, br *bufio.Reader, host string) *http.Response {
	t.Helper()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a request on the tunnel: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// openTunnel opens a CONNECT tunnel to target with header ("Name: value"), which must
// be answered 200.
func openTunnel(t *testing.T, e *tlsEnv, target, header string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, br, res := connectWith(t, e, target, header)
	if res.StatusCode != 200 {
		t.Fatalf("CONNECT %s (%s): %s", target, header, res.Status)
	}
	return c, br
}

// connectWith sends CONNECT target with header on a new connection to the plain
// listener and returns the connection, its reader and the answer.
func connectWith(t *testing.T, e *tlsEnv, target, header string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(e.url, "http://"), ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(ioTimeout))
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n"+header+"\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return c, br, res
}
