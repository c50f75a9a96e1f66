package coverage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/problem"
)

// reportWith is the default model's report after a 200 and a 500 of GET /v1/projects.
func reportWith(t *testing.T) Report {
	t.Helper()
	c := NewCounter(nil)
	c.Answer("GET", "/v1/projects", "/v1/projects", 200, "")
	c.Answer("GET", "/v1/projects", "/v1/projects", 500, "internal_error")
	return c.Report()
}

func TestIgnoreRemovesRowsFromTheTotals(t *testing.T) {
	r := reportWith(t)
	before := r.Totals
	ig, err := ParseConfig("c.yaml", []byte(`
ignore:
  - code: internal_error
    reason: every 500 is alike to our client
  - code: payload_too_large
    operation: post /v1/files
    reason: we upload nothing big
  - operation: DELETE /v1/projects/{project_id}/domains/{hostname}
    reason: we never remove a domain
  - transition: certificate issued -> error (renewal)
    reason: renewals are the host's
`))
	if err != nil {
		t.Fatal(err)
	}
	after := ig.Apply(r)
	ops, resps := 0, 0
	for _, o := range r.Operations {
		for _, a := range o.Responses {
			if codeOf(a.Code) == "internal_error" {
				resps++
			}
		}
		if o.Method == "POST" && o.Path == "/v1/files" {
			for _, a := range o.Responses {
				if codeOf(a.Code) == "payload_too_large" {
					resps++
				}
			}
		}
		if o.Method == "DELETE" && o.Path == "/v1/projects/{project_id}/domains/{hostname}" {
			ops++
			for _, a := range o.Responses {
				if codeOf(a.Code) != "internal_error" {
					resps++
				}
			}
		}
	}
	if ops != 1 || resps < 13 {
		t.Fatalf("the model changed: %d operations, %d answers to ignore", ops, resps)
	}
	got := after.Totals
	if got.Operations.Total != before.Operations.Total-1 || got.Responses.Total != before.Responses.Total-resps || got.Transitions.Total != before.Transitions.Total-1 {
		t.Fatalf("totals %+v, want %d fewer operations, %d fewer answers, 1 fewer edge than %+v", got, 1, resps, before)
	}
	if got.Ignored != ops+resps+1 {
		t.Errorf("ignored %d rows, want %d", got.Ignored, ops+resps+1)
	}
	// the 500 seen is ignored too: it leaves the seen count
	if got.Responses.Seen != before.Responses.Seen-1 {
		t.Errorf("responses seen %d, want %d", got.Responses.Seen, before.Responses.Seen-1)
	}
	i := indexOf(t, after, "GET", "/v1/projects")
	for _, a := range after.Operations[i].Responses {
		if codeOf(a.Code) == "internal_error" && a.Ignored != "every 500 is alike to our client" {
			t.Errorf("GET /v1/projects 500 internal_error: ignored %q", a.Ignored)
		}
	}
	if r.Operations[i].Responses[len(r.Operations[i].Responses)-1].Ignored != "" {
		t.Error("Apply changed the report it was given")
	}
	// Merge keeps the marks
	if m := Merge(after); m.Totals != after.Totals {
		t.Errorf("merged totals %+v, want %+v", m.Totals, after.Totals)
	}
}

func TestCoverageFileIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown top key", "ignor: []\n", `c.yaml:1:1: unknown key "ignor" (did you mean "ignore"?)`},
		{"unknown rule key", "ignore:\n  - cod: internal_error\n    reason: x\n", `c.yaml:2:5: ignore[0]: unknown key "cod" (did you mean "code"?)`},
		{"unknown code", "ignore:\n  - code: internal_eror\n    reason: x\n", `c.yaml:2:11: ignore[0].code: "internal_eror" is not an error code (did you mean "internal_error"?)`},
		{"unknown operation", "ignore:\n  - operation: GET /v1/project\n    reason: x\n", `c.yaml:2:16: ignore[0].operation: "GET /v1/project" is not an operation (did you mean "GET /v1/projects"?)`},
		{"unknown transition", "ignore:\n  - transition: deployment building -> eror\n    reason: x\n", `is not a lifecycle edge (did you mean "deployment building → error"?)`},
		{"no reason", "ignore:\n  - code: internal_error\n", "c.yaml:2:5: ignore[0]: no reason"},
		{"nothing named", "ignore:\n  - reason: x\n", "names nothing to ignore"},
		{"a tab", "ignore:\n\t- code: x\n", "c.yaml:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("c.yaml", []byte(tc.yaml))
			var l problem.List
			if !errors.As(err, &l) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a problem containing %q", err, tc.want)
			}
		})
	}
}

func TestReadConfigDefaultsToTheWorkingDirectorysFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if ig, err := ReadConfig(""); err != nil || len(ig.Rules) != 0 {
		t.Fatalf("no file: %v, %v; want nothing ignored", ig, err)
	}
	if _, err := ReadConfig("other.yaml"); err == nil || !strings.Contains(err.Error(), "other.yaml") {
		t.Fatalf("a named file that is not there: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte("ignore:\n  - code: internal_error\n    reason: r\n"), 0o644)
	if ig, err := ReadConfig(""); err != nil || len(ig.Rules) != 1 {
		t.Fatalf("%s: %v, %v; want one rule", ConfigFile, ig, err)
	}
}

func TestParseListNamesTheClosest(t *testing.T) {
	ig, err := ParseList("internal_error, payload_too_large,POST /v1/files,deployment building -> error", "--ignore")
	if err != nil || len(ig.Rules) != 4 || ig.Rules[3].Transition != "deployment building → error" {
		t.Fatalf("%+v, %v", ig, err)
	}
	if _, err := ParseList("internal_eror", "--ignore"); err == nil || !strings.Contains(err.Error(), `did you mean "internal_error"?`) {
		t.Fatalf("a misspelt code: %v", err)
	}
}

// The coverage file docs/coverage.md shows reads as it stands.
func TestTheDocsCoverageFileReads(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```yaml\n# .hostemu-coverage.yaml")
	_, block, _ = strings.Cut(block, "\n") // the rest of the comment's line
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/coverage.md shows no .hostemu-coverage.yaml")
	}
	ig, err := ParseConfig("docs", []byte(block))
	if err != nil || len(ig.Rules) != 4 {
		t.Fatalf("%v: %+v", err, ig)
	}
}

// A bundle's coverage.json loads back into a counter as it was counted (#33: a
// replayed world's coverage).
func TestLoadGivesBackTheReport(t *testing.T) {
	c := NewCounter(nil)
	c.Answer("GET", "/v1/projects", "/v1/projects", 200, "")
	c.Answer("GET", "/v1/projects", "/v1/projects", 200, "")
	c.Answer("POST", "/v1/files", "/v1/files", 418, "teapot") // undocumented
	c.Answer("POST", "", "/v1/files", 0, "")                  // dropped
	c.Transition("deployment", "ready", "production", "promote")
	c.Fault("drop")
	want := c.Report()
	d := NewCounter(nil)
	d.Answer("GET", "/v1/deployments", "/v1/deployments", 200, "") // replaced, not added to
	d.Load(want)
	got := d.Report()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Fatalf("loaded:\n%s\nwant:\n%s", a, b)
	}
}
