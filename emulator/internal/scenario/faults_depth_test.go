package scenario_test

import (
	"encoding/json"
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
