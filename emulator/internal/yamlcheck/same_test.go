package yamlcheck_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// TestSameMistakeReadsTheSame: scenarios and fixtures share one checker, so the same
// mistake is reported on the same line in the same words; only the file name, and the
// names of keys where the two kinds of file differ, change.
func TestSameMistakeReadsTheSame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		scenario, fixture   string
		scenarioK, fixtureK []string // key names told apart, replaced by K0, K1…
		line                int
		want                string // the message, keys replaced
	}{
		{name: "syntax error at the top", scenario: "a: 1\nb: 2\n- c\n", fixture: "a: 1\nb: 2\n- c\n",
			line: 3, want: "invalid YAML: did not find expected key"},
		{name: "syntax error nested", scenario: "deployments:\n  lifecycle: [{status: queued\n", fixture: "deployments:\n  lifecycle: [{status: queued\n",
			line: 2, want: "invalid YAML: did not find expected ',' or '}'"},
		{name: "block not closed", scenario: "a:\n  b: 1\n c: 2\n", fixture: "a:\n  b: 1\n c: 2\n",
			line: 3, want: "invalid YAML: did not find expected key; this line is indented by 1 space, which lines up with no block above it (indented by 0, 2)"},
		{name: "tab", scenario: "a: 1\n\tb: 2\n", fixture: "a: 1\n\tb: 2\n",
			line: 2, want: "invalid YAML: a tab character in the indentation: YAML indents with spaces only"},
		{name: "list wanted", scenario: "faults: {status: 503}\n", fixture: "tokens: {token: a}\n",
			scenarioK: []string{"faults"}, fixtureK: []string{"tokens"},
			line: 1, want: "K0: want a list, got a mapping"},
		{name: "string wanted", scenario: "description: [a]\n", fixture: "policy: {domain_write_scope: [a]}\n",
			scenarioK: []string{"description"}, fixtureK: []string{"policy.domain_write_scope"},
			line: 1, want: "K0: want a string, got a list"},
		{name: "unknown key with a near miss", scenario: "\ndescripton: x\n", fixture: "\ngenerat: {}\n",
			scenarioK: []string{"description", "descripton"}, fixtureK: []string{"generate", "generat"},
			line: 2, want: `unknown key "K1" (did you mean "K0"?)`},
		{name: "nested unknown key with a near miss", scenario: "certificates:\n  isuer: x\n", fixture: "generate:\n  projets: 1\n",
			scenarioK: []string{"certificates", "isuer", "issuer"}, fixtureK: []string{"generate", "projets", "projects"},
			line: 2, want: `K0: unknown key "K1" (did you mean "K2"?)`},
		{name: "repeated key", scenario: "description: a\ndescription: b\n", fixture: "tokens: []\ntokens: []\n",
			scenarioK: []string{"description"}, fixtureK: []string{"tokens"},
			line: 2, want: `key "K0" repeated (first at line 1)`},
		{name: "out of range", scenario: "faults:\n  - {status: 503, times: -1}\n", fixture: "generate:\n  projects: -1\n",
			scenarioK: []string{"faults[0].times", "2147483647"}, fixtureK: []string{"generate.projects", "10000"},
			line: 2, want: "K0: -1 is out of range: want a whole number from 0 to K1"},
		{name: "second document", scenario: "description: a\n---\ndescription: b\n", fixture: "tokens: []\n---\ntokens: []\n",
			scenarioK: []string{"scenario"}, fixtureK: []string{"fixture"},
			line: 2, want: "a second YAML document: a K0 file holds exactly one"},
		{name: "alias bomb", scenario: aliasBomb, fixture: aliasBomb,
			line: 6, want: "too many aliases: they expand this file past " + strconv.Itoa(4*len(aliasBomb)+1000) + " nodes (4 per byte of the file, plus 1000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, sp := scenario.Parse("s.yaml", []byte(tt.scenario))
			_, fp := fixture.Parse("f.yaml", []byte(tt.fixture))
			s, f := only(t, "scenario", sp, "s.yaml", tt.scenarioK), only(t, "fixture", fp, "f.yaml", tt.fixtureK)
			want := problem.Problem{Line: tt.line, Message: tt.want}
			if s != want || f != want {
				t.Errorf("scenario %+v\nfixture  %+v\nwant     %+v", s, f, want)
			}
		})
	}
}

// aliasBomb grows fourfold at each of its lines: a billion laughs.
var aliasBomb = "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: &d [*c, *c, *c, *c]\ne: &e [*d, *d, *d, *d]\nf: &f [*e, *e, *e, *e]\ng: &g [*f, *f, *f, *f]\nh: [*g, *g, *g, *g]\n"

// only returns the one problem of ps, with the file checked and cleared and the key
// names keys replaced by K0, K1… in its message (in that order: longer names first).
func only(t *testing.T, kind string, ps []problem.Problem, file string, keys []string) problem.Problem {
	t.Helper()
	if len(ps) != 1 || ps[0].File != file {
		t.Fatalf("%s: want one problem in %s, got %v", kind, file, ps)
	}
	p := ps[0]
	p.File = ""
	p.Column = 0 // the two files differ in layout; TestColumns checks columns
	for i, k := range keys {
		p.Message = strings.ReplaceAll(p.Message, k, "K"+strconv.Itoa(i))
	}
	return p
}
