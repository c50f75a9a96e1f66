package mutate

import (
	"strings"
	"testing"
)

func newNode() *node { return registryMake("node").(*node) }

// registryMake makes the registered runner name.
func registryMake(name string) Runner {
	r, err := FindRunner(name, nil)
	if err != nil {
		panic(err)
	}
	return r
}

func TestNodeCommand(t *testing.T) {
	junit := []string{"--test-reporter=junit", "--test-reporter-destination=/tmp/run1/node-junit.xml"}
	spec := []string{"--test-reporter=spec", "--test-reporter-destination=stdout"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		argv string
		only []string
		want []string
	}{
		// node's flags go before the files
		{"node --test test/", nil, cat([]string{"node"}, junit, spec, []string{"--test", "test/"})},
		{"node --import tsx --test", nil, cat([]string{"node"}, junit, spec, []string{"--import", "tsx", "--test"})},
		// the command's own reporter keeps its stdout
		{"node --test --test-reporter=dot", nil, cat([]string{"node"}, junit, []string{"--test-reporter-destination=stdout", "--test", "--test-reporter=dot"})},
		{"node --test --test-reporter=tap --test-reporter-destination=out.tap", nil, cat([]string{"node"}, junit, []string{"--test", "--test-reporter=tap", "--test-reporter-destination=out.tap"})},
		// a test by its own name, before its key is in a report
		{"node --test", []string{"deploy > when the API is down (503) > retries [twice]"}, cat([]string{"node"}, junit, spec, []string{`--test-name-pattern=^retries \[twice\]$`, "--test"})},
		{"node --test", []string{"lists projects"}, cat([]string{"node"}, junit, spec, []string{`--test-name-pattern=^lists projects$`, "--test"})},
	} {
		got, err := newNode().Command(strings.Fields(tc.argv), "/tmp/run1", tc.only)
		if err != nil {
			t.Errorf("%s: %v", tc.argv, err)
			continue
		}
		eq(t, tc.argv, got, tc.want)
	}
	if _, err := newNode().Command([]string{"npm", "test"}, "/tmp/run1", nil); err == nil || !strings.Contains(err.Error(), "node --test") {
		t.Errorf("npm test: %v, want an error asking for the node command", err)
	}
}

func TestNodeResults(t *testing.T) {
	n := newNode()
	dir := runDir(t, "node/report.xml", nodeReport)
	got, err := n.Results(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// skipped and todo tests did not run; "lists projects" is a test of both files, one
	// of which failed
	eq(t, "outcomes", outcomes(got), map[string]string{
		"lists projects": "FAIL",
		"deploy > when the API is down (503) > retries [twice]": "FAIL",
		"deploy > promotes":      "pass",
		"with subtests > first":  "pass",
		"with subtests > second": "FAIL",
		"rollback > promotes":    "pass",
	})
	if o := got["deploy > when the API is down (503) > retries [twice]"]; !strings.Contains(o.Output, "Expected values to be strictly equal") {
		t.Errorf("the failure's output is %q, want node's message", o.Output)
	}

	// once the report is read, a test runs by its own name…
	argv, err := n.Command([]string{"node", "--test"}, "/tmp/run2", []string{"with subtests > second"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(argv, " "), `--test-name-pattern=^second$`) {
		t.Errorf("Command = %q, want the pattern of its own name", argv)
	}
	// …unless another test has it too: --test-name-pattern would run both
	_, err = n.Command([]string{"node", "--test"}, "/tmp/run2", []string{"deploy > promotes"})
	if err == nil || !strings.Contains(err.Error(), `2 tests are named "promotes" (deploy > promotes; rollback > promotes)`) {
		t.Errorf("Command of an ambiguous name: %v", err)
	}
}
