package mutate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Whatever a testkit posts, the coordinator answers in its envelope or 2xx, never
// panics, and keeps no more than the bounds say.
func FuzzCoordinatorPost(f *testing.F) {
	for _, s := range []string{
		`{"test":"TestA","package":"p"}`,
		`{"test":"a b","file":"/x/y.test.mjs"}`,
		`{}`,
		`{"world":"w1","coverage":{"operations":[{"method":"GET","path":"/v1/projects","seen":1}]}}`,
		`{"world":"w1","coverage":null}`,
		`{"tset":1}`,
		`[`,
	} {
		f.Add(s)
	}
	c, err := NewCoordinator()
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	mux := c.srv.Handler
	m := Mutant{Test: "p TestA", Operation: "listProjects", Code: "reset"}
	id, _ := c.open(&round{runner: goRunner{}, mutants: map[string]*Mutant{"p TestA": &m}})
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/world", "/coverage"} {
			w := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/r/"+id+path, strings.NewReader(body))
			req.Host = "127.0.0.1:1" // as a testkit sends it: past guard, to decode
			req.Header.Set("Content-Type", "application/json")
			mux.ServeHTTP(w, req)
			if w.Code >= 300 && !strings.Contains(w.Body.String(), `"error":{"code":`) {
				t.Fatalf("%s %q: %d %s", path, body, w.Code, w.Body.String())
			}
		}
	})
}
