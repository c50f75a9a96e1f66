package scenario_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

func TestValidateFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "name: good\n")
	broken := writeFile(t, dir, "broken.yml", "name: broken\ndomains:\n  lifecycle: [{status: active}]\n")
	writeFile(t, dir, "fixtures.yaml", "tokens:\n  - {token: t, scope: read}\nprojects: []\n")
	dup := writeFile(t, dir, "other.yaml", "name: good\n")
	single := writeFile(t, t.TempDir(), "single.yaml", "description: alone\n")
	missing := filepath.Join(dir, "missing")

	summary, problems := scenario.ValidateFiles([]string{dir, single, missing}, isScenario)
	wantSummary := []string{good + `: scenario "good" ok`, single + `: scenario "single" ok`}
	if !reflect.DeepEqual(summary, wantSummary) {
		t.Errorf("summary %q\nwant %q", summary, wantSummary)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		broken + ":3:24: domains.lifecycle[0].status: a domain lifecycle starts with pending (the status at creation), not active",
		dup + `:1: scenario "good" is already defined in ` + good,
		missing + ": cannot read: no such file or directory",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateFilesExplicitFixtureIsCheckedAsScenario(t *testing.T) {
	t.Parallel()
	f := writeFile(t, t.TempDir(), "f.yaml", "tokens: []\n")
	if _, problems := scenario.ValidateFiles([]string{f}, isScenario); len(problems) != 1 || problems[0].Line != 1 {
		t.Errorf("problems %v", problems)
	}
}

func isScenario(data []byte) bool { return fixture.Classify(data) == fixture.KindScenario }
