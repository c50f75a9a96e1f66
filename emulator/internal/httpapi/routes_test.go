package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// Every GET route of every engine has its HEAD twin: a route added with gin's GET
// instead of get() would answer HEAD with 405.
func TestEveryGetRouteAnswersHead(t *testing.T) {
	a := newTestAPI(t)
	for name, engine := range map[string]*gin.Engine{"api": a.engine} {
		routes := engine.Routes()
		head := map[string]bool{}
		for _, r := range routes {
			if r.Method == http.MethodHead {
				head[r.Path] = true
			}
		}
		gets := 0
		for _, r := range routes {
			if r.Method == http.MethodGet {
				gets++
				if !head[r.Path] {
					t.Errorf("%s engine: GET %s has no HEAD", name, r.Path)
				}
			}
		}
		if gets == 0 {
			t.Errorf("%s engine: no GET routes", name)
		}
	}
}

// headerOf is Header.Get for the canonical names the request path asks for: every
// name the package's code passes it, found in its source.
func TestHeaderOfIsGet(t *testing.T) {
	h := http.Header{}
	h.Add("authorization", "Bearer a")
	h.Add("Authorization", "Bearer b")
	h.Set("X-Forwarded-Proto", "https")
	h.Set("content-type", "application/json")
	h.Set("Content-Encoding", "gzip")
	h["Origin"] = []string{}
	names := map[string]bool{}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`headerOf\([^,()]+, "([^"]*)"\)`).FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
	}
	for _, want := range []string{"Authorization", "Content-Type", "Content-Encoding", "Expect", "X-File-Digest"} {
		if !names[want] {
			t.Errorf("headerOf(…, %q) not found in the source: is the pattern still right?", want)
		}
	}
	for name := range names {
		if got, want := headerOf(h, name), h.Get(name); got != want {
			t.Errorf("headerOf(%q) = %q, Get = %q", name, got, want)
		}
		if http.CanonicalHeaderKey(name) != name {
			t.Errorf("%q is not canonical: headerOf would miss what Get finds", name)
		}
	}
}
