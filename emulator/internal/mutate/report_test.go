package mutate

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func sampleRun() *Run {
	return &Run{
		Score: 0.5,
		Mutants: []Mutant{
			{Test: "p TestA", Operation: "listProjects", Method: "GET", Path: "/v1/projects", Code: "service_unavailable", Status: 503, Result: Survived, Output: "--- PASS: TestA"},
			{Test: "p TestB", Operation: "createDeployment", Method: "POST", Path: "/v1/deployments", Code: "reset", Result: Killed},
			{Test: "p TestB", Operation: "createDeployment", Method: "POST", Path: "/v1/deployments", Code: "invalid_json", Status: 400, Result: NotRun, Why: "past --budget"},
		},
		Baseline: Baseline{Runner: "go", Passed: true, Tests: 2, WithWorlds: 2},
		Runs:     2,
	}
}

func TestReportFormats(t *testing.T) {
	r := sampleRun()
	r.Shorten()
	if r.Mutants[0].Test != "TestA" {
		t.Errorf("one package's tests are named without it: %q", r.Mutants[0].Test)
	}
	var text bytes.Buffer
	if err := r.Write(&text, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SURVIVED  TestA: listProjects (GET /v1/projects) answered 503 service_unavailable",
		"    | --- PASS: TestA",
		"NOT_RUN   TestB: createDeployment answered 400 invalid_json (past --budget)",
		"score 50.0%: 1 killed, 1 survived, 1 not run of 3 mutants",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Index(text.String(), "SURVIVED") > strings.Index(text.String(), "NOT_RUN") {
		t.Error("survivors come first")
	}
	var md bytes.Buffer
	r.Write(&md, "markdown")
	if !strings.Contains(md.String(), "| `listProjects` (GET /v1/projects) | 503 service_unavailable | TestA |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var ju bytes.Buffer
	r.Write(&ju, "junit")
	var suites junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, ju.String())
	}
	if suites.Tests != 3 || suites.Failures != 1 || suites.Skipped != 1 || len(suites.Suites) != 2 {
		t.Errorf("junit = %+v", suites)
	}
	var js bytes.Buffer
	r.Write(&js, "json")
	for _, want := range []string{`"score": 0.5`, `"result": "survived"`, `"code": "reset"`, `"baseline": {`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("json lacks %s:\n%s", want, js.String())
		}
	}
}

// Two packages: tests keep their package.
func TestShortenKeepsPackagesApart(t *testing.T) {
	r := &Run{Mutants: []Mutant{{Test: "p TestA"}, {Test: "q TestA"}}, Baseline: Baseline{Runner: "go"}}
	r.Shorten()
	if r.Mutants[0].Test != "p TestA" || r.Mutants[1].Test != "q TestA" {
		t.Errorf("%+v", r.Mutants)
	}
}

// The JavaScript runners' keys hold spaces of their own: they are shown whole.
func TestShortenKeepsJSNames(t *testing.T) {
	for runner, keys := range map[string][]string{
		"vitest": {"test/a.test.js > client counts projects", "test/a.test.js > client creates a deployment"},
		"jest":   {"test/a.test.cjs > counts projects", "test/a.test.cjs > creates a deployment"},
		"node":   {"client > counts projects", "client > creates a deployment"},
	} {
		r := &Run{Mutants: []Mutant{{Test: keys[0]}, {Test: keys[1]}}, Baseline: Baseline{Runner: runner}}
		r.Shorten()
		if r.Mutants[0].Test != keys[0] || r.Mutants[1].Test != keys[1] {
			t.Errorf("%s: %q, %q; want them whole", runner, r.Mutants[0].Test, r.Mutants[1].Test)
		}
	}
}

func TestCatalogue(t *testing.T) {
	c, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	i, ok := c.byID["createDeployment"]
	if !ok {
		t.Fatalf("no createDeployment in %v", c.IDs())
	}
	op := c.Ops[i]
	if op.Method != "POST" || op.Path != "/v1/deployments" || op.Status["invalid_json"] != 400 || op.Status["service_unavailable"] != 503 {
		t.Errorf("createDeployment = %+v", op)
	}
	if !contains(c.Codes(), "reset") {
		t.Error("reset is a code --codes takes")
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// A test's name is the runner's, whatever it holds: in the markdown report (a GitHub
// step summary) it stays in its table cell and its row, and its HTML is text, not
// markup (a name holding </details> does not end the folded table).
func TestMarkdownKeepsOddNamesInTheirCell(t *testing.T) {
	r := &Run{Mutants: []Mutant{{Test: "t > a|b\r\n<b>x</b></details>`c`", Operation: "listProjects", Method: "GET", Path: "/v1/projects", Code: "reset", Result: Survived}},
		Baseline: Baseline{Runner: "vitest", Passed: true}}
	var md bytes.Buffer
	if err := r.Write(&md, "markdown"); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if strings.Count(out, "</details>") != 1 || strings.Contains(out, "<b>") || strings.Contains(out, "\r") {
		t.Errorf("markdown:\n%s", out)
	}
	if !strings.Contains(out, `t &gt; a\|b  &lt;b&gt;x&lt;/b&gt;&lt;/details&gt;'c'`) {
		t.Errorf("the name is not shown as text in its cell:\n%s", out)
	}
}
