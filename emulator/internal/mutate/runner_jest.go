package mutate

import (
	"path/filepath"
	"regexp"
	"strings"
)

// jest runs a Jest suite: `jest`, `npx jest`, `node node_modules/jest/bin/jest.js`,
// `npm test` with --runner jest… Its testkit tells each world's test (circus's running
// test) and file, so one run of the suite tries a mutant per test.
type jest struct{}

func init() {
	register("jest", func(argv []string) bool { return programIs(argv, "jest") }, func() Runner { return jest{} })
}

// jestReport is --json's --outputFile in a run's directory.
const jestReport = "jest.json"

func (jest) Name() string { return "jest" }

// Key is the test's file and full name (fileKey), as --json's testResults[].name and
// assertionResults[].fullName give them.
func (jest) Key(h Hello) string { return fileKey(h) }

func (jest) Alone() bool { return false }

// Command adds --json with --outputFile in dir (the human report stays on stderr), turns
// code coverage off and, for only, adds Jest's own filters: -t with a pattern that
// matches exactly those full names (Jest reads it ignoring case) and the files as
// anchored path patterns. A test of the same full name in another of those files, or in
// a file the command's own patterns name, runs too: its worlds say which test they are,
// and get no mutant of another's.
func (jest) Command(argv []string, dir string, only []string) ([]string, error) {
	// code coverage: nothing mutate reads, and time (or thresholds) in every run
	add := []string{"--json", "--outputFile=" + filepath.Join(dir, jestReport), "--coverage=false"}
	if only != nil {
		files, names, err := sortedFiles(only)
		if err != nil {
			return nil, err
		}
		add = append(add, "--testNamePattern="+namePattern(names))
		for _, f := range files {
			add = append(add, "^"+regexp.QuoteMeta(f)+"$")
		}
	}
	return appendArgs(argv, add...), nil
}

// Results reads --json's file. A passed test's output says so: Jest's report holds no
// output of a passing test, and its console lines in the run's output do not say whose
// they are.
func (jest) Results(dir string, _ []byte) (map[string]Outcome, error) {
	return jsonResults(filepath.Join(dir, jestReport), func(_ string, names []string) string {
		return "✓ " + strings.Join(names, " › ") + " passed\n"
	})
}
