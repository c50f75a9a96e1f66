package mutate

import (
	"strings"
	"testing"
)

// --tests takes the names the report shows (Go's without their package when the run
// has one package, as `-run` does) as well as the whole keys, and a name or pattern of
// the list that is none of the baseline's tests is an error naming the closest: a typo
// must not narrow a gate silently.
func TestTestsFlagNamesAsShown(t *testing.T) {
	cat, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]map[string]bool{
		"example.com/p TestA":          {"GET /v1/projects": true},
		"example.com/p TestB/sub case": {"GET /v1/projects": true},
		"example.com/q TestC":          {"GET /v1/projects": true},
	}
	for _, tc := range []struct {
		tests []string
		want  []string // the tests of the mutants
		err   string
	}{
		{tests: []string{"TestA"}, want: []string{"example.com/p TestA"}},
		{tests: []string{"example.com/p TestA"}, want: []string{"example.com/p TestA"}},
		{tests: []string{"TestB/*"}, want: []string{"example.com/p TestB/sub case"}},
		{tests: []string{"*TestC"}, want: []string{"example.com/q TestC"}},
		{tests: []string{"TestA", "TestC"}, want: []string{"example.com/p TestA", "example.com/q TestC"}},
		{tests: []string{"TestA", "TestAA"}, err: `--tests "TestAA" is none of the baseline's tests that called an operation (closest: "TestA")`},
		{tests: []string{"TestZ*"}, err: `--tests "TestZ*" matches none of the baseline's tests that called an operation`},
	} {
		x := &executor{cfg: Config{Runner: goRunner{}, Catalogue: cat, Tests: tc.tests}}
		ms, err := x.mutants(called)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("--tests %v: %v, want an error with %s", tc.tests, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("--tests %v: %v", tc.tests, err)
			continue
		}
		seen := map[string]bool{}
		var got []string
		for _, m := range ms {
			if !seen[m.Test] {
				seen[m.Test] = true
				got = append(got, m.Test)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("--tests %v: mutants of %v, want %v", tc.tests, got, tc.want)
		}
	}
}
