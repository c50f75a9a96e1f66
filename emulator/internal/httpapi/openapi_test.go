package httpapi

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// describedOperations are the "METHOD /path" of a description, paths in OpenAPI's
// {param} form.
func describedOperations(t *testing.T, doc *openapi.Doc) map[string]bool {
	t.Helper()
	var d struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(doc.Raw(), &d); err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for path, item := range d.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	return ops
}

var ginParam = regexp.MustCompile(`[:*]([A-Za-z_]+)`)

// routedOperations are the router's routes that doc must describe, as "METHOD /path"
// with {param}: a HEAD twin of a GET (get()) and the preflight of a description are no
// operations of their own.
func routedOperations(a *API, describes func(path string) bool) map[string]bool {
	ops := map[string]bool{}
	for _, r := range a.engine.Routes() {
		if r.Method == http.MethodHead || r.Method == http.MethodOptions || !describes(r.Path) {
			continue
		}
		ops[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	return ops
}

// The public description and the router agree: every route of the hosting and
// decryption services (and the description's own) is described, and every described
// operation has a route. A route added without its description fails here.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	a := newTestAPI(t)
	public := func(path string) bool {
		k := kindOfPath(path, http.MethodGet)
		return k == KindHosting || k == KindCipher || path == "/openapi.json" || path == "/openapi.yaml"
	}
	compareOperations(t, "hosting.yaml", routedOperations(a, public), describedOperations(t, openapi.Hosting()))
}

// The control API's description and the router agree likewise: the routes of one world
// are described once, server-relative, for /_emulator and for a namespace's prefix (the
// description's second server).
func TestOpenAPIDescribesEveryControlRoute(t *testing.T) {
	a := New(newTestAPI(t).w, Config{Namespaces: namespace.New(namespace.Config{})})
	routed := map[string]bool{}
	for op := range routedOperations(a, func(path string) bool {
		return kindOfPath(path, http.MethodGet) == KindControl || path == "/_emulator/health"
	}) {
		method, path, _ := strings.Cut(op, " ")
		if rest, ok := strings.CutPrefix(path, "/_emulator/namespaces/{ns}/"); ok {
			path = "/" + rest
		} else {
			path = strings.TrimPrefix(path, "/_emulator")
		}
		routed[method+" "+path] = true
	}
	compareOperations(t, "control.yaml", routed, describedOperations(t, openapi.Control()))
}

func compareOperations(t *testing.T, name string, routed, described map[string]bool) {
	t.Helper()
	var missing, extra []string
	for op := range routed {
		if !described[op] {
			missing = append(missing, op)
		}
	}
	for op := range described {
		if !routed[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, op := range missing {
		t.Errorf("%s lacks the route %s", name, op)
	}
	for _, op := range extra {
		t.Errorf("%s describes %s, which has no route", name, op)
	}
	if len(routed) == 0 {
		t.Errorf("%s: no routes found", name)
	}
}
