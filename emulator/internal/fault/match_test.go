package fault_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// A fault's operations are coverage's, with their operationIds and services.
func TestOperations(t *testing.T) {
	t.Parallel()
	model := coverage.Default()
	for _, tt := range []struct {
		id, method, template, service string
	}{
		{"createDeployment", "POST", "/v1/deployments", "hosting"},
		{"getDeployment", "GET", "/v1/deployments/{id}", "hosting"},
		{"promoteDeployment", "POST", "/v1/deployments/{id}/promote", "hosting"},
		{"addDomain", "POST", "/v1/projects/{project_id}/domains", "hosting"},
		{"decrypt", "POST", "/v1/decrypt", "cipher"},
	} {
		i := model.OpByID(tt.id)
		if i < 0 {
			t.Errorf("%s: no operation", tt.id)
			continue
		}
		if op := model.Operations[i]; op.Method != tt.method || op.Path != tt.template || op.Service != tt.service {
			t.Errorf("%s: %+v", tt.id, op)
		}
		if err := (&fault.Spec{Match: fault.Match{Operation: tt.id}, Status: 503}).Validate(); err != nil {
			t.Errorf("%s: %v", tt.id, err)
		}
	}
	if model.OpByID("getOpenApiJson") >= 0 {
		t.Error("the description's own route is no fault's operation")
	}
	err := (&fault.Spec{Match: fault.Match{Operation: "getOpenApiJson"}, Status: 503}).Validate()
	if err == nil || !strings.Contains(err.Error(), "unknown operation") || !strings.Contains(err.Error(), `closest: "`) {
		t.Errorf("getOpenApiJson: %v", err)
	}
}

// Each match field holds for the request it names and not for its neighbours.
func TestMatchDepth(t *testing.T) {
	t.Parallel()
	get := func(path string) fault.Request {
		return fault.Request{Method: "GET", Path: path, Service: "hosting"}
	}
	withQuery := func(r fault.Request, q string) fault.Request { r.RawQuery = q; return r }
	withHeader := func(r fault.Request, k, v string) fault.Request {
		r.Header = map[string][]string{k: {v}}
		return r
	}
	withBody := func(r fault.Request, body string) fault.Request {
		r.Body = body
		return r
	}
	create := fault.Request{Method: "POST", Path: "/v1/deployments", Service: "hosting", Body: `{"target":"production","meta":{"n":3},"files":[{"path":"/a"}]}`}
	for _, tt := range []struct {
		name  string
		match string
		r     fault.Request
		want  bool
	}{
		{"operation", `{"operation":"getDeployment"}`, get("/v1/deployments/dpl_1"), true},
		{"operation, HEAD of a GET", `{"operation":"getDeployment"}`, fault.Request{Method: "HEAD", Path: "/v1/deployments/dpl_1", Service: "hosting"}, true},
		{"operation, longer path", `{"operation":"getDeployment"}`, get("/v1/deployments/dpl_1/logs"), false},
		{"operation, empty parameter", `{"operation":"getDeployment"}`, get("/v1/deployments/"), false},
		{"operation, other method", `{"operation":"getDeployment"}`, fault.Request{Method: "DELETE", Path: "/v1/deployments/dpl_1", Service: "hosting"}, false},
		{"operation, other service", `{"operation":"decrypt"}`, fault.Request{Method: "POST", Path: "/v1/decrypt", Service: "hosting"}, false},
		{"query", `{"query":{"page":"2"}}`, withQuery(get("/v1/projects"), "page=2"), true},
		{"query other value", `{"query":{"page":"2"}}`, withQuery(get("/v1/projects"), "page=3"), false},
		{"query present", `{"query":{"page":"*"}}`, withQuery(get("/v1/projects"), "page="), true},
		{"query absent", `{"query":{"page":"*"}}`, get("/v1/projects"), false},
		{"header glob", `{"headers":{"x-run":"ci-*"}}`, withHeader(get("/v1/projects"), "X-Run", "ci-42"), true},
		{"header other", `{"headers":{"X-Run":"ci-*"}}`, withHeader(get("/v1/projects"), "X-Run", "dev"), false},
		{"header absent", `{"headers":{"X-Run":"*"}}`, get("/v1/projects"), false},
		{"body string", `{"body":{"target":"production"}}`, create, true},
		{"body number", `{"body":{"meta.n":3}}`, create, true},
		{"body object", `{"body":{"files[0]":{"path":"/a"}}}`, create, true},
		{"body differs", `{"body":{"target":"preview"}}`, create, false},
		{"body string is not the number", `{"body":{"meta.n":"3"}}`, create, false},
		{"body number is not the string", `{"body":{"target":3}}`, withBody(create, `{"target":"3"}`), false},
		{"body string of a number", `{"body":{"target":"3"}}`, withBody(create, `{"target":"3"}`), true},
		{"body true is not the string", `{"body":{"target":true}}`, withBody(create, `{"target":"true"}`), false},
		{"body null is not the string", `{"body":{"target":null}}`, withBody(create, `{"target":"null"}`), false},
		{"body null", `{"body":{"target":null}}`, withBody(create, `{"target":null}`), true},
		{"body number however written", `{"body":{"meta.n":3.0}}`, create, true},
		{"body number, exponent", `{"body":{"meta.n":0.3e1}}`, create, true},
		{"body number differs", `{"body":{"meta.n":3.5}}`, create, false},
		{"body object, keys in any order, numbers by value", `{"body":{"meta":{"n":3e0}}}`, withBody(create, `{"meta":{"n":3,"m":[1,2.0]}}`), false},
		{"body object equal", `{"body":{"meta":{"m":[1,2],"n":3}}}`, withBody(create, `{"meta":{"n":3.0,"m":[1,2.0]}}`), true},
		{"body array order", `{"body":{"meta.m":[2,1]}}`, withBody(create, `{"meta":{"m":[1,2]}}`), false},
		{"body huge exponent only as itself", `{"body":{"meta.n":1e99999}}`, withBody(create, `{"meta":{"n":1e99998}}`), false},
		{"body numbers differing past 256 bits", `{"body":{"meta.n":100000000000000000000000000000000000000000000000000000000000000000000000000000000}}`, withBody(create, `{"meta":{"n":100000000000000000000000000000000000000000000000000000000000000000000000000000001}}`), false},
		{"body decimals differing past 256 bits", `{"body":{"meta.n":0.1}}`, withBody(create, `{"meta":{"n":0.10000000000000000000000000000000000000000000000000000000000000000000000000000000001}}`), false},
		{"body number, many digits, same value", `{"body":{"meta.n":12.5}}`, withBody(create, `{"meta":{"n":0.0000125000000000000000000000000000000000000000000000000000000000000000000000000000000000e6}}`), true},
		{"body huge exponent, same value", `{"body":{"meta.n":1e-99999}}`, withBody(create, `{"meta":{"n":0.01e-99997}}`), true},
		{"body tiny is not zero", `{"body":{"meta.n":0}}`, withBody(create, `{"meta":{"n":1e-99999}}`), false},
		{"body minus zero is zero", `{"body":{"meta.n":0}}`, withBody(create, `{"meta":{"n":-0.0e5}}`), true},
		{"body negative is not positive", `{"body":{"meta.n":-3}}`, withBody(create, `{"meta":{"n":3}}`), false},
		{"body not JSON", `{"body":{"target":"production"}}`, fault.Request{Method: "POST", Path: "/v1/deployments", Service: "hosting", Body: "target=production"}, false},
		{"token", `{"token":"t-1"}`, fault.Request{Token: "t-1"}, true},
		{"other token", `{"token":"t-1"}`, fault.Request{Token: "t-12"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m fault.Match
			if err := json.Unmarshal([]byte(tt.match), &m); err != nil {
				t.Fatal(err)
			}
			s := fault.NewSet(nil)
			if _, err := s.Add(fault.Spec{Match: m, Status: 503}); err != nil {
				t.Fatal(err)
			}
			if _, got := s.Match(tt.r); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

// A number in a request body of a million digits is compared with a match's number
// in time linear in its digits (a big.Float parse of it took seconds: quadratic).
func TestBodyNumberManyDigits(t *testing.T) {
	t.Parallel()
	m, err := fault.ParseBodyMatch("n=3")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"n":1` + strings.Repeat("7", 1<<20) + `}`,
		`{"n":3.` + strings.Repeat("0", 1<<20) + `1}`,
		`{"n":3` + strings.Repeat("0", 1<<20) + `e-1048576}`,
	} {
		v, ok := fault.DecodeBody(body)
		got := m.HoldsIn(v, ok) // a big.Float parse of each took about 2 s: quadratic
		if want := strings.HasSuffix(body, "e-1048576}"); got != want {
			t.Errorf("HoldsIn = %v, want %v", got, want)
		}
	}
}

// WantsBody asks for the body only when a body fault matches the rest.
func TestWantsBody(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(nil)
	r := fault.Request{Method: "POST", Path: "/v1/deployments", Service: "hosting"}
	s.Add(fault.Spec{Match: fault.Match{Method: "POST"}, Status: 503})
	if s.WantsBody(r) {
		t.Fatal("no body fault, yet WantsBody")
	}
	s.Add(fault.Spec{Match: fault.Match{Method: "GET", Body: map[string]fault.BodyValue{"a": `1`}}, Status: 503})
	if s.WantsBody(r) {
		t.Fatal("the body fault is for GET, yet WantsBody for a POST")
	}
	s.Add(fault.Spec{Match: fault.Match{Operation: "createDeployment", Body: map[string]fault.BodyValue{"a": `1`}}, Status: 503})
	if !s.WantsBody(r) {
		t.Fatal("a body fault for createDeployment, yet no WantsBody")
	}
}

// then answers one step per firing and is spent after the last.
func TestThen(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(nil)
	var spec fault.Spec
	json.Unmarshal([]byte(`{"then":[{"error":"service_unavailable","retry_after":3},{"pass":true},{"status":500,"headers":{"X-A":"1"},"body":{"b":2}}]}`), &spec)
	if _, err := s.Add(spec); err != nil {
		t.Fatal(err)
	}
	r := fault.Request{Method: "GET", Path: "/v1/projects", Service: "hosting"}
	a1, _ := s.Match(r)
	a2, _ := s.Match(r)
	a3, _ := s.Match(r)
	_, ok4 := s.Match(r)
	if a1.Status != 503 || a1.Code != "service_unavailable" || a1.RetryAfter != 3 || !a2.Pass || a3.Status != 500 ||
		a3.Shape == nil || a3.Shape.Headers["X-A"] != "1" || a3.Shape.Body.Text != `{"b":2}` || ok4 {
		t.Fatalf("%+v\n%+v\n%+v\n%v", a1, a2, a3, ok4)
	}
}

// A path no route of the service can match is refused naming the closest template;
// globs and parameters that can match are accepted.
func TestReachablePaths(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path, service string
		ok            bool
	}{
		{"/v1/deployments", "", true},
		{"/v1/deployments/dpl_1", "hosting", true},
		{"/v1/deployments/*", "", true},
		{"/v1/*/promote", "", true},
		{"/v1/projects/*/domains/*.test", "", true},
		{"/v1/*", "cipher", true},
		{"*", "", true},
		{"/v1/deployment", "", false},
		{"/deployments", "", false},
		{"/v1/deployments/", "", false},
		{"/v1/deployments//promote", "", false},
		{"/v1/decrypt", "hosting", false},
		{"/v1/deployments", "cipher", false},
		{"/v1/deployment", "edge", true}, // the edge serves any path
	} {
		spec := fault.Spec{Match: fault.Match{Path: tt.path, Service: tt.service}, Status: 503}
		err := spec.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("path %q service %q: %v, want ok=%v", tt.path, tt.service, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "closest:") {
			t.Errorf("path %q: %v names no closest route", tt.path, err)
		}
	}
}

func FuzzMatchJSON(f *testing.F) {
	f.Add([]byte(`{"operation":"createDeployment","query":{"page":"2"},"headers":{"X-Run":"*"},"body":{"target":"production","meta.n":3},"token":"t"}`), "POST", "/v1/deployments", "page=2", `{"target":"production"}`)
	f.Add([]byte(`{"path":"/v1/*/promote","body":{"files[0].path":"/index.html"}}`), "POST", "/v1/deployments/dpl_1/promote", "", `{"files":[{"path":"/index.html"}]}`)
	f.Add([]byte(`{"operation":"decrypt","service":"cipher"}`), "POST", "/v1/decrypt", "a=%zz", "")
	f.Fuzz(func(t *testing.T, data []byte, method, path, query, body string) {
		var m fault.Match
		if json.Unmarshal(data, &m) != nil {
			return
		}
		spec := fault.Spec{Match: m, Status: 503}
		if spec.Validate() != nil {
			return
		}
		s := fault.NewSet(nil)
		if _, err := s.Add(spec); err != nil {
			t.Fatalf("valid spec not added: %v", err)
		}
		r := fault.Request{Method: method, Path: path, Service: m.Service, RawQuery: query, Body: body, Header: map[string][]string{"X-Run": {"1"}}}
		s.WantsBody(r) // must not panic
		s.Match(r)
		// the match survives the round trip GET /_emulator/faults makes
		out, _ := json.Marshal(m)
		var back fault.Match
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if again, _ := json.Marshal(back); string(again) != string(out) {
			t.Fatalf("round trip: %s then %s", out, again)
		}
	})
}

// FuzzReachable: a path of a route, or a glob made from one, is always reachable.
func FuzzReachable(f *testing.F) {
	f.Add("/v1/deployments/dpl_1/promote", 3, 7)
	f.Add("/v1/projects/prj_1/domains/a.test", 0, 0)
	f.Add("/v1/decrypt", 4, 2)
	f.Fuzz(func(t *testing.T, path string, i, j int) {
		if len(path) > 200 {
			return
		}
		spec := fault.Spec{Match: fault.Match{Path: path}, Status: 503}
		err := spec.Validate() // must not panic nor take long
		routed := false
		model := coverage.Default()
		for _, op := range model.Operations {
			if model.Op(op.Method, "", path) >= 0 {
				routed = true
			}
		}
		if routed && err != nil {
			t.Fatalf("%q is a route's path, refused: %v", path, err)
		}
		if routed && i >= 0 && j >= 0 && len(path) > 0 {
			a, b := i%len(path), j%len(path)
			a, b = min(a, b), max(a, b)
			glob := path[:a] + "*" + path[b:]
			if !strings.HasPrefix(glob, "/") {
				return
			}
			spec.Match.Path = glob
			if err := spec.Validate(); err != nil {
				t.Fatalf("glob %q of route path %q refused: %v", glob, path, err)
			}
		}
	})
}

// missGET is the request of the hot-path benchmarks: a GET of a deployment, with a
// query, a header and a read token.
var missGET = fault.Request{Method: "GET", Path: "/v1/deployments/dpl_1", Service: "hosting", RawQuery: "x=1",
	Header: map[string][]string{"Accept": {"*/*"}}, Token: "t-read", Scope: "read"}

// missFaults are 100 faults none of which matches missGET, each different: ten of each
// of the ten kinds of testdata/miss-faults.json ({n} from 0 to 9), which between them
// use every match field (method, path, path glob, service, scope, host, operation,
// query, headers, body, token); three of the kinds are of the GET's own service and
// method, and two of them of its operation or its path's prefix. The emulator's
// BenchmarkGetDeploymentFaults serves a GET through the same 100.
func missFaults(b *testing.B) *fault.Set {
	data, err := os.ReadFile("testdata/miss-faults.json")
	if err != nil {
		b.Fatal(err)
	}
	var kinds []json.RawMessage
	if err := json.Unmarshal(data, &kinds); err != nil {
		b.Fatal(err)
	}
	s := fault.NewSet(nil)
	for n := range 10 {
		for _, k := range kinds {
			var spec fault.Spec
			if err := json.Unmarshal([]byte(strings.ReplaceAll(string(k), "{n}", fmt.Sprint(n))), &spec); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Add(spec); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

// BenchmarkMatch100Miss is the hot path of a world with 100 faults none of which
// matches a GET (missFaults): what the HTTP layer asks of the faults for each request,
// WantsBody then Match (docs/performance.md).
func BenchmarkMatch100Miss(b *testing.B) {
	s := missFaults(b)
	b.ReportAllocs()
	for b.Loop() {
		if s.WantsBody(missGET) {
			b.Fatal("WantsBody")
		}
		if _, ok := s.Match(missGET); ok {
			b.Fatal("matched")
		}
	}
}

// BenchmarkMatch100Candidates is the index's worst case: 100 faults that agree with
// the GET on every field the index files them by (service, method, its operation)
// and differ only in a header's value, so each is checked, as every fault was before
// the index.
func BenchmarkMatch100Candidates(b *testing.B) {
	s := fault.NewSet(nil)
	for i := range 100 {
		if _, err := s.Add(fault.Spec{Match: fault.Match{Operation: "getDeployment", Headers: map[string]string{"Accept": fmt.Sprintf("application/x-%d", i)}}, Status: 503}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if s.WantsBody(missGET) {
			b.Fatal("WantsBody")
		}
		if _, ok := s.Match(missGET); ok {
			b.Fatal("matched")
		}
	}
}
