package edge_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzEdgeRequest sends whatever request the server's parser accepts through the edge:
// it never panics, answers 5xx only for a deployment building or failed, and a 2xx body
// is bytes of an uploaded file (or a placeholder page).
func FuzzEdgeRequest(f *testing.F) {
	s := newSite(f)
	f.Add("GET", "/", "shop.example.test", "", "")
	f.Add("GET", "/../../etc/passwd", "shop.example.test", "application/json", "")
	f.Add("GET", "/%2e%2e/%2e%2e/etc/passwd", s.hosts["dpl_ready1"], "", "bytes=0-1")
	f.Add("HEAD", "//about", "www.example.test", "", "")
	f.Add("GET", "http://shop.example.test/docs/", "127.0.0.1:4700", "", "bytes=-5")
	f.Add("GET", "/a\\b", "x.wild.test", "text/html", "")
	f.Add("GET", "/"+strings.Repeat("a/", 2000), "shop.example.test", "", "")
	f.Add("GET", "/big.txt", "shop.example.test", "", "bytes=1-2,5-9")
	f.Fuzz(func(t *testing.T, method, target, host, accept, rng string) {
		raw := method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\nAccept: " + accept + "\r\nRange: " + rng + "\r\n\r\n"
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		code := w.Header().Get("X-Hostemu-Error")
		if w.Code >= 500 && code != "deployment_building" && code != "deployment_failed" {
			t.Fatalf("%q: %d %s", raw, w.Code, code)
		}
		if w.Header().Get("Server") != "hostemu" {
			t.Fatalf("%q: no Server header", raw)
		}
		if w.Code/100 == 2 && w.Header().Get("X-Hostemu-Placeholder") == "" && !fromAFile(s, w.Body.String()) {
			t.Fatalf("%q: %d body %.80q is no uploaded file's", raw, w.Code, w.Body.String())
		}
	})
}

func fromAFile(s *site, body string) bool {
	if strings.HasPrefix(body, "--") { // a multipart range answer: its parts come from big.txt
		return true
	}
	for content := range s.hash {
		if strings.Contains(content, body) {
			return true
		}
	}
	return false
}
