package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVitestCommand(t *testing.T) {
	t.Chdir("/")
	dir := "/tmp/run1"
	json := []string{"--reporter=json", "--outputFile.json=/tmp/run1/vitest.json", "--coverage.enabled=false"}
	for _, tc := range []struct {
		argv string
		only []string
		want []string
	}{
		{"npx vitest run", nil, append([]string{"npx", "vitest", "run", "--reporter=default"}, json...)},
		// never watch mode
		{"vitest", nil, append([]string{"vitest", "run", "--reporter=default"}, json...)},
		{"vitest --root web", nil, append([]string{"vitest", "run", "--root", "web", "--reporter=default"}, json...)},
		{"npx vitest watch", nil, append([]string{"npx", "vitest", "run", "--reporter=default"}, json...)},
		{"node node_modules/vitest/vitest.mjs run", nil, append([]string{"node", "node_modules/vitest/vitest.mjs", "run", "--reporter=default"}, json...)},
		// the command's own reporters stay, and no default is added
		{"vitest run --reporter=verbose", nil, append([]string{"vitest", "run", "--reporter=verbose"}, json...)},
		// an npm script takes them after --
		{"npm test", nil, append([]string{"npm", "test", "--", "--reporter=default"}, json...)},
		// names sorted and made distinct, files too
		{
			"npx vitest run", []string{"p/test/b.test.js > deploy retries (503)", "p/test/a.test.js > lists projects", "p/test/b.test.js > lists projects"},
			append(append([]string{"npx", "vitest", "run", "--reporter=default"}, json...),
				`--testNamePattern=^(?:deploy retries \(503\)|lists projects)$`, "/p/test/a.test.js", "/p/test/b.test.js"),
		},
	} {
		got, err := vitest{}.Command(strings.Fields(tc.argv), dir, tc.only)
		if err != nil {
			t.Errorf("%s: %v", tc.argv, err)
			continue
		}
		eq(t, tc.argv, got, tc.want)
	}
	if _, err := (vitest{}).Command([]string{"vitest"}, dir, []string{"no file"}); err == nil {
		t.Error("Command took a key without its file")
	}
}

func TestVitestResults(t *testing.T) {
	dir := runDir(t, "vitest/report.json", vitestReport)
	output, err := os.ReadFile(filepath.Join("testdata", "vitest", "output.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("/")
	got, err := vitest{}.Results(dir, output)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "outcomes", outcomes(got), map[string]string{
		"tmp/proj/test/client.test.js > lists projects":                                    "pass",
		"tmp/proj/test/client.test.js > deploy when the API is down (503) retries [twice]": "FAIL",
		"tmp/proj/test/client.test.js > deploy promotes":                                   "pass",
		// two tests of one name in one file: failed, as one of them did
		"tmp/proj/test/other.test.js > lists projects": "FAIL",
	})
	if o := got["tmp/proj/test/client.test.js > deploy when the API is down (503) retries [twice]"]; !strings.Contains(o.Output, "expected 'ready' to be 'error'") {
		t.Errorf("the failure's output is %q, want Vitest's message", o.Output)
	}
	// a passed test's output: what it printed, from the default reporter's blocks
	want := "✓ deploy > promotes passed\nstdout | test/client.test.js > deploy > promotes\npromoted dpl_1\n\nstderr | test/client.test.js > deploy > promotes\na warning\n\n"
	if o := got["tmp/proj/test/client.test.js > deploy promotes"]; o.Output != want {
		t.Errorf("a passed test's output is %q, want %q", o.Output, want)
	}
	if o := got["tmp/proj/test/client.test.js > lists projects"]; o.Output != "✓ lists projects passed\n" {
		t.Errorf("a passed test that printed nothing has the output %q", o.Output)
	}
}
