package coverage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// Every operation of the hosting and decryption APIs is in the model, each with one
// success and the answers every operation documents (no token, rate limited).
func TestDefaultModelListsEveryOperation(t *testing.T) {
	m := Default()
	if len(m.Operations) < 12 {
		t.Fatalf("%d operations in the model", len(m.Operations))
	}
	for _, o := range m.Operations {
		var ok2xx int
		has := map[Response]bool{}
		for _, r := range o.Responses {
			has[r] = true
			if r.Status < 300 {
				ok2xx++
			}
		}
		if ok2xx != 1 || !has[Response{401, "missing_token"}] || !has[Response{429, "rate_limited"}] {
			t.Errorf("%s %s: %v", o.Method, o.Path, o.Responses)
		}
	}
}

// A code added to the description's x-error-codes appears in coverage with no change
// to this package: the denominator is derived.
func TestANewDocumentedCodeAppearsWithoutCodeChanges(t *testing.T) {
	doc := openapi.Hosting().Raw()
	old := []byte("x-error-codes: [deployment_not_ready]")
	if !bytes.Contains(doc, old) {
		t.Fatal("the description no longer documents promote's 409 as this test expects")
	}
	m, err := Build(bytes.Replace(doc, old, []byte("x-error-codes: [deployment_not_ready, domain_already_exists]"), 1))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCounter(m)
	c.Answer("POST", "", "/v1/deployments/dpl_1/promote", 409, "domain_already_exists")
	r := c.Report()
	var found bool
	for _, o := range r.Operations {
		for _, resp := range o.Responses {
			if o.Path == "/v1/deployments/{id}/promote" && resp.Status == 409 && resp.Code != nil && *resp.Code == "domain_already_exists" {
				found = resp.Seen == 1 && !resp.Undocumented
			}
		}
	}
	if !found {
		t.Fatal("the newly documented 409 domain_already_exists is not counted as a documented answer of promote")
	}
	if got, want := r.Totals.Responses.Total, NewCounter(nil).Report().Totals.Responses.Total+1; got != want {
		t.Fatalf("responses total %d, want %d", got, want)
	}
}

// The cost coverage adds to every answer of the emulated API: an operation found by
// the router's template (the usual case) or by the path (a request refused before
// routing), then one atomic add.
func BenchmarkAnswerRouted(b *testing.B) {
	c := NewCounter(nil)
	b.ReportAllocs()
	for b.Loop() {
		c.Answer("GET", "/v1/deployments/:id", "/v1/deployments/dpl_1", 200, "")
	}
}

func BenchmarkAnswerByPath(b *testing.B) {
	c := NewCounter(nil)
	b.ReportAllocs()
	for b.Loop() {
		c.Answer("GET", "", "/v1/projects/prj_1/domains", 429, "rate_limited")
	}
}

func TestOpFindsEveryOperationByRouteAndPath(t *testing.T) {
	m := Default()
	for i, o := range m.Operations {
		path := strings.NewReplacer("{id}", "dpl_1", "{project_id}", "prj_1", "{hostname}", "a.example.test").Replace(o.Path)
		if got := m.Op(o.Method, ginRoute(o.Path), ""); got != i {
			t.Errorf("%s %s by route: %d, want %d", o.Method, o.Path, got, i)
		}
		if got := m.Op(o.Method, "", path); got != i {
			t.Errorf("%s %s by path %s: %d, want %d", o.Method, o.Path, path, got, i)
		}
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/deployments/"}, {"GET", "/v1/deployments//logs"}, {"GET", "/v1/deployments/a/b"},
		{"PUT", "/v1/deployments"}, {"GET", "/v1"}, {"GET", ""}, {"GET", "v1/projects"}, {"OPTIONS", "/v1/projects"},
		{"GET", "/v1/projects/"}, {"POST", "/v1/deployments/x/promote/"},
	} {
		if got := m.Op(tc.method, "", tc.path); got != -1 {
			t.Errorf("%s %q matched operation %d", tc.method, tc.path, got)
		}
	}
	if got := m.Op("HEAD", "", "/v1/projects"); got < 0 || m.Operations[got].Method != "GET" {
		t.Errorf("HEAD does not count as GET: %d", got)
	}
}

// Counting is safe under concurrent answers, resets and reports (go test -race), and
// memory does not grow with requests: undocumented answers past the bound are added up.
func TestCounterBoundsUndocumentedAnswers(t *testing.T) {
	c := NewCounter(nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				c.Answer("GET", "", "/v1/projects", 599, fmt.Sprintf("code_%d_%d", g, i))
				c.Answer("GET", "/v1/projects", "", 200, "")
				if i%100 == 0 {
					c.Report()
				}
			}
		}()
	}
	wg.Wait()
	r := c.Report()
	undoc := 0
	for _, o := range r.Operations {
		for _, resp := range o.Responses {
			if resp.Undocumented {
				undoc++
			}
		}
	}
	if undoc != MaxUndocumented || r.OtherUndocumented != 2000-MaxUndocumented {
		t.Fatalf("%d undocumented answers listed, %d added up; want %d and %d", undoc, r.OtherUndocumented, MaxUndocumented, 2000-MaxUndocumented)
	}
	if r.Operations[indexOf(t, r, "GET", "/v1/projects")].Seen != 4000 {
		t.Fatalf("GET /v1/projects seen %d, want 4000", r.Operations[indexOf(t, r, "GET", "/v1/projects")].Seen)
	}
}

func indexOf(t *testing.T, r Report, method, path string) int {
	for i, o := range r.Operations {
		if o.Method == method && o.Path == path {
			return i
		}
	}
	t.Fatalf("no operation %s %s", method, path)
	return -1
}

func TestBuildRefusesADescriptionItCannotCount(t *testing.T) {
	for name, doc := range map[string]string{
		"not yaml":         "paths: [",
		"no operation":     "paths: {/openapi.json: {get: {responses: {'200': {description: x}}}}}",
		"unknown code":     "paths: {/v1/x: {get: {responses: {'400': {x-error-codes: [no_such_code]}}}}}",
		"code off status":  "paths: {/v1/x: {get: {responses: {'404': {x-error-codes: [invalid_json]}}}}}",
		"no codes":         "paths: {/v1/x: {get: {responses: {'404': {description: x}}}}}",
		"dangling ref":     "paths: {/v1/x: {get: {responses: {'404': {$ref: '#/components/responses/Nope'}}}}}",
		"status not a int": "paths: {/v1/x: {get: {responses: {'4xx': {description: x}}}}}",
	} {
		if _, err := Build([]byte(doc)); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// Merging reports gives what one counter of the union would have reported.
func TestMergeEqualsTheUnionsReport(t *testing.T) {
	a, b := NewCounter(nil), NewCounter(nil)
	a.Answer("GET", "/v1/projects", "", 200, "")
	a.Answer("GET", "", "/v1/projects", 418, "teapot")
	a.Transition("deployment", "queued", "building", "")
	a.Fault("status")
	b.Answer("GET", "/v1/projects", "", 200, "")
	b.Answer("POST", "", "/v1/files", 401, "missing_token")
	b.Answer("GET", "", "/v1/projects", 418, "teapot")
	b.Transition("domain", "pending", "verifying", "")
	got, _ := json.Marshal(Merge(a.Report(), b.Report()))
	want, _ := json.Marshal(Union(nil, a, b).Report())
	if string(got) != string(want) {
		t.Fatalf("merged:\n%s\nunion:\n%s", got, want)
	}
	if e, _ := json.Marshal(Merge()); !strings.Contains(string(e), `"percent":100`) {
		t.Errorf("an empty merge: %s", e)
	}
}
