package edge_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
)

func TestNormalizeHost(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"demo-shop-abc.hostemu.localhost:4700": "demo-shop-abc.hostemu.localhost",
		"Shop.Example.TEST.":                   "shop.example.test",
		"shop.example.test.:443":               "shop.example.test",
		"[::1]:4700":                           "::1",
		"[::1]":                                "::1",
		"[2001:DB8::1]":                        "2001:db8::1",
		"::1":                                  "::1",
		"127.0.0.1:80":                         "127.0.0.1",
		"localhost":                            "localhost",
		"":                                     "",
		"[::1":                                 "",
		"[::1]x":                               "",
		"a[b]":                                 "",
		"x:":                                   "x",
	}
	for in, want := range cases {
		if got := edge.NormalizeHost(in); got != want {
			t.Errorf("NormalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRequestHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw       string // request as read by a server
		wantHost  string
		wantProxy bool
	}{
		{"GET / HTTP/1.1\r\nHost: Demo-X.hostemu.localhost:4700\r\n\r\n", "demo-x.hostemu.localhost", false},
		{"GET /a HTTP/1.1\r\nHost: [::1]:4700\r\n\r\n", "::1", false},
		{"GET http://Shop.Example.Test./a?b HTTP/1.1\r\nHost: 127.0.0.1:4700\r\n\r\n", "shop.example.test", true},
		{"GET HTTP://shop.example.test:8080/ HTTP/1.1\r\nHost: shop.example.test\r\n\r\n", "shop.example.test", true},
		{"GET https://[2001:db8::1]/ HTTP/1.1\r\nHost: x\r\n\r\n", "2001:db8::1", true},
		{"OPTIONS * HTTP/1.1\r\nHost: shop.example.test\r\n\r\n", "shop.example.test", false},
	}
	for _, c := range cases {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(c.raw)))
		if err != nil {
			t.Fatalf("%q: %v", c.raw, err)
		}
		host, proxy := edge.RequestHost(r)
		if host != c.wantHost || proxy != c.wantProxy {
			t.Errorf("%q: RequestHost = %q, %v; want %q, %v", c.raw, host, proxy, c.wantHost, c.wantProxy)
		}
	}
	// A request built for a client, handed straight to a handler, is not a proxy request.
	r := httptest.NewRequest("GET", "/", nil)
	r.RequestURI = ""
	r.URL.Host = "elsewhere.test"
	if host, proxy := edge.RequestHost(r); host != "example.com" || proxy {
		t.Errorf("client-style request: %q, %v", host, proxy)
	}
}

func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"a.b:1", "[::1]:80", "A.B.", "[", "]", "[[a]]", "::", "x..", "[a.]", "\x00", "ü.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := edge.NormalizeHost(in)
		if again := edge.NormalizeHost(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
		if strings.HasSuffix(out, ".") || strings.ContainsAny(out, "[]ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("NormalizeHost(%q) = %q", in, out)
		}
		if strings.Count(out, ":") == 1 {
			t.Fatalf("NormalizeHost(%q) = %q kept a port", in, out)
		}
	})
}

// FuzzRequestHost feeds arbitrary request targets and Host headers through the server's
// own parser: whatever it accepts, RequestHost gives a normalised host, and a proxy
// request's host is its URL's.
func FuzzRequestHost(f *testing.F) {
	f.Add("/", "demo-x.hostemu.localhost:4700")
	f.Add("http://shop.example.test/a?b", "127.0.0.1")
	f.Add("HTTPS://[::1]:443/x", "")
	f.Add("*", "a")
	f.Add("http://user:pw@Shop.Test.:80/", "x")
	f.Add("//evil.test/path", "shop.test")
	f.Fuzz(func(t *testing.T, target, host string) {
		raw := "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return
		}
		got, proxy := edge.RequestHost(r)
		if got != edge.NormalizeHost(got) {
			t.Fatalf("%q: host %q not normalised", raw, got)
		}
		if proxy && got != edge.NormalizeHost(r.URL.Host) {
			t.Fatalf("%q: proxy host %q, URL host %q", raw, got, r.URL.Host)
		}
		if !proxy && got != edge.NormalizeHost(r.Host) {
			t.Fatalf("%q: host %q, Host %q", raw, got, r.Host)
		}
	})
}
