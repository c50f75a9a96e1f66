package scenario_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// A scenario's faults take the new match fields and answers as POST /_emulator/faults
// does, and list the same JSON.
func TestParseFaultDepth(t *testing.T) {
	t.Parallel()
	text := `faults:
  - match:
      operation: createDeployment
      query: {dry: "*"}
      headers: {X-Run: "r*"}
      body: {meta.n: 3, target: production, "files[0]": {path: /index.html}}
      token: t-deploy
    then:
      - {error: service_unavailable, retry_after: 5, headers: {X-A: "1"}}
      - {status: 500, body: {ok: true}}
      - {body: plain text}
      - {break: truncate, after_bytes: 10}
      - {pass: true}
  - {match: {path: /v1/deployments/*}, error: rate_limited, message: slow down}
  - {break: slow, bytes_per_second: 100}
`
	s, problems := scenario.Parse("s.yaml", []byte(text))
	if s == nil {
		t.Fatalf("problems: %v", problems)
	}
	got, _ := json.Marshal(s.Faults)
	want := `[{"match":{"operation":"createDeployment","query":{"dry":"*"},"headers":{"X-Run":"r*"},"body":{"files[0]":{"path":"/index.html"},"meta.n":3,"target":"production"},"token":"t-deploy"},` +
		`"then":[{"error":"service_unavailable","retry_after":5,"headers":{"X-A":"1"}},{"status":500,"body":{"ok":true}},{"body":"plain text"},{"break":"truncate","after_bytes":10},{"pass":true}]},` +
		`{"match":{"path":"/v1/deployments/*"},"message":"slow down","error":"rate_limited"},{"match":{},"break":"slow","bytes_per_second":100}]`
	if string(got) != want {
		t.Fatalf("faults\n%s\nwant\n%s", got, want)
	}
}

// Every problem of the new fields is reported with its line, naming the closest value.
func TestParseFaultDepthProblems(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown match key", "faults:\n  - match: {quary: {a: b}}\n    status: 503\n", 2, `unknown key "quary" (did you mean "query"?)`},
		{"unknown operation", "faults:\n  - match: {operation: getDeploymnt}\n    status: 503\n", 2, `closest: "getDeployment"`},
		{"unreachable path", "faults:\n  - status: 503\n    match: {path: /v1/deployment}\n", 2, `closest: "/v1/deployments"`},
		{"query not a mapping", "faults:\n  - status: 503\n    match: {query: page}\n", 3, "want a mapping"},
		{"header value not a string", "faults:\n  - status: 503\n    match:\n      headers: {X-A: [1]}\n", 4, "X-A"},
		{"unknown error code", "faults:\n  - error: service_unavalable\n", 2, `did you mean "service_unavailable"?`},
		{"unknown step key", "faults:\n  - then:\n      - {pas: true}\n", 3, `unknown key "pas" (did you mean "pass"?)`},
		{"step without action", "faults:\n  - then:\n      - {}\n", 2, "then[0] needs an action"},
		{"unknown break", "faults:\n  - break: trunkate\n", 2, `did you mean "truncate"?`},
		{"after_bytes too large", "faults:\n  - {break: truncate, after_bytes: 99999999}\n", 2, "after_bytes"},
		{"then with times", "faults:\n  - times: 2\n    then: [{status: 500}]\n", 2, "then excludes times"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, problems := scenario.Parse("s.yaml", []byte(tt.text))
			if s != nil {
				t.Fatalf("parsed %+v; want a problem", s)
			}
			for _, p := range problems {
				if strings.Contains(p.Message, tt.want) && p.Line == tt.line && p.Column > 0 {
					return
				}
			}
			t.Errorf("problems %v\nwant line %d: ...%s...", problems, tt.line, tt.want)
		})
	}
}

// A number in a fault's body (the answer's, or match.body's value) is kept as written:
// a YAML integer past float64's 53 bits, or 1.10, is not rounded on its way to JSON.
// What YAML writes in a form JSON has not (0x1F, +5, .inf) is the value it stands for;
// aliases are followed, and a mapping with a merge key or a key that is not a string
// is read as before.
func TestFaultBodyNumbersAsWritten(t *testing.T) {
	t.Parallel()
	text := `faults:
  - match: {path: /v1/files}
    status: 500
    body: &nums {k: 1.0}
  - match:
      body: {n: 100000000000000000001, v: 1.10}
    status: 500
    body: {id: 12345678901234567890, v: 1.10, e: 1e400, x: 0x1F, p: +5, list: [-0.000000000000000000001, 7], a: *nums}
`
	s, problems := scenario.Parse("s.yaml", []byte(text))
	if s == nil {
		t.Fatalf("problems: %v", problems)
	}
	got, _ := json.Marshal(s.Faults[1])
	for _, want := range []string{`"n":100000000000000000001`, `"v":1.10`, `"id":12345678901234567890`, `"e":1e400`, `"x":31`, `"p":5`, `"list":[-0.000000000000000000001,7]`, `"a":{"k":1.0}`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("fault %s does not hold %s", got, want)
		}
	}
}

// What stays as before around numbers as written: a quoted or tagged string stays a
// string, a merge key still merges, a key that is not a string is still refused, and
// anchors that would expand past the file's bound are refused before any value is read.
func TestFaultBodyYAMLValues(t *testing.T) {
	t.Parallel()
	text := `faults:
  - match: {body: {a: "3", b: !!str 4, c: '5'}}
    status: 500
    body:
      base: &base {x: 1}
      merged: {<<: *base, y: 2.50}
`
	s, problems := scenario.Parse("s.yaml", []byte(text))
	if s == nil {
		t.Fatalf("problems: %v", problems)
	}
	got, _ := json.Marshal(s.Faults[0])
	for _, want := range []string{`"a":"3"`, `"b":"4"`, `"c":"5"`, `"merged":{"x":1,"y":2.5}`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("fault %s does not hold %s", got, want)
		}
	}
	var laughs strings.Builder
	laughs.WriteString("l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for _, tt := range []struct{ name, text, want string }{
		{"a number key", "faults:\n  - status: 500\n    body: {1: x}\n", "want a value JSON can hold"},
		{"anchors past the bound", "x:\n" + indent(laughs.String()) + "faults:\n  - status: 500\n    body: *l8\n", "too many aliases"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := scenario.Parse("s.yaml", []byte(tt.text))
			if len(problems) == 0 || !strings.Contains(fmt.Sprint(problems), tt.want) {
				t.Fatalf("problems %v, want one saying %q", problems, tt.want)
			}
		})
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
