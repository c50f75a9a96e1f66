package mutate

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The reports in testdata/{vitest,jest,node} are real: each directory holds the test
// files and the report the runner wrote for them (see its README.md).

// outcomes is a results map as "key → pass|FAIL", for comparing.
func outcomes(m map[string]Outcome) map[string]string {
	out := map[string]string{}
	for k, o := range m {
		out[k] = "pass"
		if o.Failed {
			out[k] = "FAIL"
		}
	}
	return out
}

// runDir is a fresh run directory holding file (from testdata) as name.
func runDir(t *testing.T, file, name string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFindJSRunners(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"vitest", "vitest"},
		{"vitest run", "vitest"},
		{"npx vitest run --root web", "vitest"},
		{"node node_modules/vitest/vitest.mjs run", "vitest"},
		{"./node_modules/.bin/vitest", "vitest"},
		{"pnpm vitest", "vitest"},
		{"jest", "jest"},
		{"npx jest --ci", "jest"},
		{"node node_modules/jest/bin/jest.js", "jest"},
		{"node --test", "node"},
		{"node --test test/", "node"},
		{"node --import tsx --test src/**/*.test.ts", "node"},
	} {
		r, err := FindRunner("", strings.Fields(tc.cmd))
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		if r.Name() != tc.want {
			t.Errorf("%s: runner %s, want %s", tc.cmd, r.Name(), tc.want)
		}
	}
	for _, cmd := range []string{"node server.js", "npm test", "node jest.config.js"} {
		if r, err := FindRunner("", strings.Fields(cmd)); err == nil {
			t.Errorf("%s: runner %s, want none", cmd, r.Name())
		}
	}
	for _, name := range []string{"vitest", "jest", "node"} {
		if r, err := FindRunner(name, []string{"npm", "test"}); err != nil || r.Name() != name {
			t.Errorf("--runner %s: %v, %v", name, r, err)
		}
	}
}

func TestFileKey(t *testing.T) {
	t.Chdir("/") // keys hold files relative to the working directory
	for _, tc := range []struct {
		h    Hello
		want string
	}{
		{Hello{Test: "deploy retries", File: "/p/test/a.test.js"}, "p/test/a.test.js > deploy retries"},
		{Hello{}, ""},
		{Hello{File: "/p/test/a.test.js"}, ""}, // a world of a beforeAll
		{Hello{Test: "deploy retries"}, ""},
	} {
		for _, r := range []Runner{vitest{}, jest{}} {
			if got := r.Key(tc.h); got != tc.want {
				t.Errorf("%s: Key(%+v) = %q, want %q", r.Name(), tc.h, got, tc.want)
			}
		}
	}
	// from a project's directory, its files are named from there, and split back whole
	dir := t.TempDir()
	t.Chdir(dir)
	key := vitest{}.Key(Hello{Test: "deploy > retries", File: filepath.Join(dir, "test", "a b.test.js")})
	if key != "test/a b.test.js > deploy > retries" {
		t.Errorf("Key = %q", key)
	}
	if file, name, err := splitFileKey(key); err != nil || file != filepath.Join(dir, "test", "a b.test.js") || name != "deploy > retries" {
		t.Errorf("splitFileKey(%q) = %q, %q, %v", key, file, name, err)
	}
	// a directory whose name holds " > ": the file that is there decides
	sub := filepath.Join(dir, "a > b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "c.test.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	key = vitest{}.Key(Hello{Test: "deploy > retries", File: filepath.Join(sub, "c.test.js")})
	if file, name, err := splitFileKey(key); err != nil || file != filepath.Join(sub, "c.test.js") || name != "deploy > retries" {
		t.Errorf("splitFileKey(%q) = %q, %q, %v", key, file, name, err)
	}
	if got := newNode().Key(Hello{Test: "x", File: "/f"}); got != "" {
		t.Errorf("node: Key = %q, want \"\" (its testkit cannot tell its test)", got)
	}
}

// TestNamePattern: the pattern of names matches each of them and nothing else, in Go's
// syntax as in JavaScript's (the runners' RegExp): metacharacters are escaped.
func TestNamePattern(t *testing.T) {
	names := []string{"lists projects", "retries (twice) [503]", "a.b*c+d?e|f^g$h{1}\\", "lists projects"}
	re := regexp.MustCompile(namePattern(names))
	for _, n := range names {
		if !re.MatchString(n) {
			t.Errorf("%s does not match %q", re, n)
		}
	}
	for _, n := range []string{"lists projects twice", "x lists projects", "retries twice [503]", "aXb*c+d?e|f^g$h{1}\\", ""} {
		if re.MatchString(n) {
			t.Errorf("%s matches %q", re, n)
		}
	}
	if got, want := namePattern([]string{"b", "a", "b"}), "^(?:a|b)$"; got != want {
		t.Errorf("namePattern = %q, want %q (sorted, distinct)", got, want)
	}
	if got, want := namePattern([]string{"a (1)"}), `^a \(1\)$`; got != want {
		t.Errorf("namePattern = %q, want %q", got, want)
	}
}

// A run killed before its report was written has no outcomes, and no error: its tests
// did not finish. A report that is not one is an error.
func TestJSResultsWithoutReport(t *testing.T) {
	for _, r := range []Runner{vitest{}, jest{}, newNode()} {
		got, err := r.Results(t.TempDir(), nil)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: Results of an empty directory = %v, %v; want none, nil", r.Name(), got, err)
		}
	}
	for _, tc := range []struct {
		r    Runner
		file string
	}{{vitest{}, vitestReport}, {jest{}, jestReport}, {newNode(), nodeReport}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(`{"testResults": [`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.r.Results(dir, nil); err == nil || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: Results of a cut report: %v, want an error naming %s", tc.r.Name(), err, tc.file)
		}
	}
}

func TestAppendArgs(t *testing.T) {
	for _, tc := range []struct{ argv, want string }{
		{"npx jest", "npx jest --json"},
		{"npm test", "npm test -- --json"},
		{"npm run test:unit", "npm run test:unit -- --json"},
		{"npm test -- --ci", "npm test -- --ci --json"},
		{"pnpm test", "pnpm test --json"},
		{"yarn jest", "yarn jest --json"},
	} {
		if got := strings.Join(appendArgs(strings.Fields(tc.argv), "--json"), " "); got != tc.want {
			t.Errorf("appendArgs(%s) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo", 2); got != "h\n… (cut)" {
		t.Errorf("clip cut a rune: %q", got)
	}
	if got := clip("hello", 5); got != "hello" {
		t.Errorf("clip = %q", got)
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

// FuzzJSReports: whatever a report holds, the JavaScript runners' parsers return
// outcomes or an error, never panic, and every key they give is one Command can narrow
// to. Seeds: testdata/fuzz/FuzzJSReports (small: the real reports of testdata/ make the
// fuzzer crawl).
func FuzzJSReports(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		passed := func(string, []string) string { return "" }
		if got, err := parseJSONReport(data, passed); err == nil {
			for key := range got {
				for _, r := range []Runner{vitest{}, jest{}} {
					if _, err := r.Command([]string{"npx", r.Name()}, "/tmp/run", []string{key}); err != nil {
						t.Errorf("%s: the report gave key %q, which Command refuses: %v", r.Name(), key, err)
					}
				}
			}
		}
		n := newNode()
		if got, err := n.parse(data); err == nil {
			for key := range got {
				if _, err := n.Command([]string{"node", "--test"}, "/tmp/run", []string{key}); err != nil && !strings.Contains(err.Error(), "give them distinct names") {
					t.Errorf("node: the report gave key %q, which Command refuses: %v", key, err)
				}
			}
		}
	})
}
