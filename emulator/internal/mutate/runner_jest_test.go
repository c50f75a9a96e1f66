package mutate

import (
	"strings"
	"testing"
)

func TestJestCommand(t *testing.T) {
	t.Chdir("/")
	json := []string{"--json", "--outputFile=/tmp/run1/jest.json", "--coverage=false"}
	for _, tc := range []struct {
		argv string
		only []string
		want []string
	}{
		{"npx jest", nil, append([]string{"npx", "jest"}, json...)},
		{"npm test", nil, append([]string{"npm", "test", "--"}, json...)},
		{"node node_modules/jest/bin/jest.js --ci", nil, append([]string{"node", "node_modules/jest/bin/jest.js", "--ci"}, json...)},
		{
			"npx jest", []string{"p/test/a.test.cjs > deploy retries [twice]", "p/test/a.test.cjs > lists projects"},
			append(append([]string{"npx", "jest"}, json...), `--testNamePattern=^(?:deploy retries \[twice\]|lists projects)$`, `^/p/test/a\.test\.cjs$`),
		},
	} {
		got, err := jest{}.Command(strings.Fields(tc.argv), "/tmp/run1", tc.only)
		if err != nil {
			t.Errorf("%s: %v", tc.argv, err)
			continue
		}
		eq(t, tc.argv, got, tc.want)
	}
}

func TestJestResults(t *testing.T) {
	dir := runDir(t, "jest/report.json", jestReport)
	t.Chdir("/")
	got, err := jest{}.Results(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// broken.test.cjs failed to load: its test never ran, and is not there
	eq(t, "outcomes", outcomes(got), map[string]string{
		"tmp/proj/jest/client.test.cjs > lists projects":                                    "pass",
		"tmp/proj/jest/client.test.cjs > deploy when the API is down (503) retries [twice]": "FAIL",
		"tmp/proj/jest/client.test.cjs > deploy promotes":                                   "pass",
		"tmp/proj/jest/other.test.cjs > lists projects":                                     "FAIL",
	})
	if o := got["tmp/proj/jest/client.test.cjs > deploy when the API is down (503) retries [twice]"]; !strings.Contains(o.Output, `Received: "ready"`) {
		t.Errorf("the failure's output is %q, want Jest's message", o.Output)
	}
	if o := got["tmp/proj/jest/client.test.cjs > deploy promotes"]; o.Output != "✓ deploy › promotes passed\n" {
		t.Errorf("a passed test's output is %q", o.Output)
	}
}
