package mutate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPytestDetect(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		at   int
	}{
		{[]string{"pytest"}, 0},
		{[]string{"pytest", "-q", "tests"}, 0},
		{[]string{".venv/bin/pytest", "-n", "2"}, 0},
		{[]string{"py.test", "tests"}, 0},
		{[]string{"python", "-m", "pytest", "tests"}, 2},
		{[]string{"python3", "-m", "pytest"}, 2},
		{[]string{"/usr/bin/python3.11", "-m", "pytest", "-x"}, 2},
		{[]string{"coverage", "run", "-m", "pytest"}, 3},
		{[]string{"uv", "run", "pytest", "-q"}, 2},
		{[]string{"poetry", "run", "pytest"}, 2},
		{[]string{"uvx", "pytest"}, 1},
		{[]string{"env", "X=1", "pytest"}, 2},
		{[]string{"npx", "vitest", "run", "tests/pytest"}, -1},
		{[]string{"go", "test", "./pytest/..."}, -1},
		{[]string{"node", "--test", "pytest.js"}, -1},
		{[]string{"python", "pytest"}, -1},
		{[]string{"npm", "run", "pytest"}, -1},
		{[]string{"uv", "run", "./pytest"}, -1},
		{[]string{"pdm", "run", "pytest"}, 2},
		{[]string{"make", "test"}, -1},
	} {
		if got := pytestAt(tc.argv); got != tc.at {
			t.Errorf("pytestAt(%q) = %d, want %d", tc.argv, got, tc.at)
		}
	}
	for _, argv := range [][]string{{"pytest"}, {"python", "-m", "pytest"}, {"python3", "-m", "pytest", "-n", "2"}, {"py.test"}} {
		r, err := FindRunner("", argv)
		if err != nil || r.Name() != "pytest" {
			t.Errorf("FindRunner(%q) = %v, %v; want the pytest runner", argv, r, err)
		}
	}
	if r, err := FindRunner("pytest", []string{"make", "test"}); err != nil || r.Name() != "pytest" || r.Alone() {
		t.Errorf("FindRunner(pytest, make test) = %v, %v", r, err)
	}
}

func TestPytestCommand(t *testing.T) {
	dir := t.TempDir()
	report := "--junitxml=" + filepath.Join(dir, pytestReport)
	ours := []string{report, "-p", "no:cacheprovider", "-o", "junit_logging=all", "--maxfail=0", "--hostemu-outcomes=" + filepath.Join(dir, pytestProgress)}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	r := pytestRunner{}
	for _, tc := range []struct {
		name string
		argv []string
		want []string
	}{
		{"plain", []string{"pytest"}, cat([]string{"pytest"}, ours)},
		{"the user's flags stay first", []string{"python", "-m", "pytest", "-x", "--junitxml=mine.xml", "tests"}, cat([]string{"python", "-m", "pytest", "-x", "--junitxml=mine.xml", "tests"}, ours)},
		{"before a --", []string{"pytest", "-q", "--", "tests/-odd"}, cat([]string{"pytest", "-q"}, ours, []string{"--", "tests/-odd"})},
		{"env X=1 pytest", []string{"env", "X=1", "pytest", "-q"}, cat([]string{"env", "X=1", "pytest", "-q"}, ours)},
		{"--runner pytest: appended", []string{"./run-tests.sh", "--", "x"}, cat([]string{"./run-tests.sh"}, ours, []string{"--", "x"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Command(tc.argv, dir, nil)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Command(%q) = %q, %v\nwant %q", tc.argv, got, err, tc.want)
			}
		})
	}

	t.Run("only", func(t *testing.T) {
		run := filepath.Join(t.TempDir(), "round-1") // not made yet: Command makes it
		only := []string{"tests/test_a.py::test_x[a.b]", "tests/test_a.py::TestC::test_y[sp ace]"}
		got, err := r.Command([]string{"python", "-m", "pytest", "-n", "2"}, run, only)
		if err != nil {
			t.Fatal(err)
		}
		list := filepath.Join(run, pytestOnly)
		if last := got[len(got)-1]; last != "--hostemu-only="+list {
			t.Errorf("Command with only ends with %q, want --hostemu-only=%s", last, list)
		}
		data, err := os.ReadFile(list)
		if err != nil || string(data) != only[0]+"\n"+only[1]+"\n" {
			t.Errorf("%s = %q, %v", list, data, err)
		}
		got, err = r.Command([]string{"pytest"}, run, []string{})
		if err != nil || got[len(got)-1] != "--hostemu-only="+list {
			t.Errorf("Command with an empty only = %q, %v: want a run of nothing", got, err)
		}
		if data, _ := os.ReadFile(list); len(data) != 0 {
			t.Errorf("an empty only wrote %q", data)
		}
	})
	for _, bad := range []struct {
		argv []string
		only []string
	}{
		{nil, nil},
		{[]string{"pytest"}, []string{"a\nb"}},
		{[]string{"pytest"}, []string{""}},
	} {
		if got, err := r.Command(bad.argv, dir, bad.only); err == nil {
			t.Errorf("Command(%q, only %q) = %q, want an error", bad.argv, bad.only, got)
		}
	}
}

// shapes is what testdata/pytest/suite's tests do (gen.sh writes their reports).
var shapes = map[string]bool{ // node id → failed
	"test_shapes.py::test_plain":                      false,
	"test_shapes.py::test_fails":                      true,
	"test_shapes.py::test_param[a.b]":                 false,
	"test_shapes.py::test_param[x::y]":                true,
	"test_shapes.py::test_param[sp ace]":              false,
	"test_shapes.py::TestOuter::test_method":          false,
	"test_shapes.py::TestOuter::TestInner::test_deep": false,
	"test_shapes.py::test_setup_error":                true,
	"test_shapes.py::test_call_and_teardown_fail":     true,
	"test_shapes.py::test_teardown_only_fails":        true,
	"test_shapes.py::test_skipped":                    false,
	"test_shapes.py::test_xfail":                      false,
	"test_shapes.py::test_xpass_strict":               true,
	"sub/test_dup.py::TestOuter::test_method":         false,
}

// pytestRunDir is a run's directory holding the named testdata report as pytest-junit.xml.
func pytestRunDir(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pytest", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, pytestReport), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPytestResults(t *testing.T) {
	r := pytestRunner{}
	for _, name := range []string{"junit.xml", "junit-xdist.xml", "junit-legacy.xml"} {
		t.Run(name, func(t *testing.T) {
			got, err := r.Results(pytestRunDir(t, name), nil)
			if err != nil {
				t.Fatal(err)
			}
			failed := map[string]bool{}
			for k, o := range got {
				failed[k] = o.Failed
			}
			if !reflect.DeepEqual(failed, shapes) {
				t.Errorf("Results: %v\nwant %v", failed, shapes)
			}
			for id, want := range map[string][]string{
				"test_shapes.py::test_plain":                  {"Captured Out", "plain says hi"},
				"test_shapes.py::test_fails":                  {"one is not two"},
				"test_shapes.py::test_call_and_teardown_fail": {"call fails too", "teardown breaks"},
				"test_shapes.py::test_setup_error":            {"setup breaks"},
			} {
				for _, w := range want {
					if !strings.Contains(got[id].Output, w) {
						t.Errorf("%s: Output %q lacks %q", id, got[id].Output, w)
					}
				}
			}
			if out, want := got["test_shapes.py::test_param[a.b]"].Output, "test_shapes.py::test_param[a.b]: passed; pytest captured no output of it\n"; out != want {
				t.Errorf("a quiet passing test's Output is %q, want %q (no empty Captured sections)", out, want)
			}
			if out := got["test_shapes.py::test_skipped"].Output; !strings.Contains(out, "skipped: not today") {
				t.Errorf("a skipped test's Output is %q, want its reason", out)
			}
		})
	}
	t.Run("without the plugin", func(t *testing.T) {
		_, err := r.Results(pytestRunDir(t, "junit-noplugin.xml"), nil)
		if err == nil || !strings.Contains(err.Error(), "plugin") || !strings.Contains(err.Error(), "test_shapes::test_plain") {
			t.Errorf("Results of a report without node ids: %v, want an error naming the plugin and a test", err)
		}
	})
	t.Run("no report, no test run", func(t *testing.T) {
		got, err := r.Results(t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), "no report") {
			t.Errorf("Results without a report = %v, %v; want an error (a run that cannot tell kills nothing)", got, err)
		}
	})
	for _, name := range []string{"outcomes.jsonl", "outcomes-xdist.jsonl"} {
		t.Run("stopped before the report: "+name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "pytest", name))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, pytestProgress), data, 0o644)
			got, err := r.Results(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			failed := map[string]bool{}
			for k, o := range got {
				failed[k] = o.Failed
			}
			if !reflect.DeepEqual(failed, shapes) {
				t.Errorf("Results from the lines: %v\nwant %v", failed, shapes)
			}
			if out := got["test_shapes.py::test_call_and_teardown_fail"].Output; !strings.Contains(out, "call fails too") || !strings.Contains(out, "teardown breaks") {
				t.Errorf("Output of a failed test from the lines: %q", out)
			}
			if out := got["test_shapes.py::test_plain"].Output; !strings.Contains(out, "passed") {
				t.Errorf("Output of a passed test from the lines: %q", out)
			}

			// killed in the middle of a line: the tests whose teardown was written count
			cut := bytes.Index(data, []byte(`"test_shapes.py::test_setup_error", "when": "teardown"`))
			if cut < 0 {
				t.Fatal("no teardown line of test_setup_error")
			}
			os.WriteFile(filepath.Join(dir, pytestProgress), data[:cut+10], 0o644)
			got, err = r.Results(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got["test_shapes.py::test_setup_error"]; ok || len(got) == 0 {
				t.Errorf("Results of lines cut in test_setup_error's teardown: %v, want the tests before it and not it", got)
			}
			// a cut JUnit report beside the lines: the lines
			os.WriteFile(filepath.Join(dir, pytestReport), []byte(`<testsuites><testsuite><testcase classname="x" name`), 0o644)
			if got2, err := r.Results(dir, nil); err != nil || !reflect.DeepEqual(got2, got) {
				t.Errorf("a cut report beside the lines: %v, %v; want the lines' %v", got2, err, got)
			}
		})
	}
	t.Run("an empty run", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, pytestReport), []byte(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0"/></testsuites>`), 0o644)
		got, err := r.Results(dir, nil)
		if err != nil || len(got) != 0 {
			t.Errorf("Results of no tests = %v, %v", got, err)
		}
	})
	t.Run("a cut report", func(t *testing.T) {
		dir := pytestRunDir(t, "junit.xml")
		p := filepath.Join(dir, pytestReport)
		data, _ := os.ReadFile(p)
		os.WriteFile(p, data[:len(data)/2], 0o644)
		if got, err := r.Results(dir, nil); err == nil {
			t.Errorf("Results of half a report = %v, want an error", got)
		}
	})
	t.Run("the output's tail", func(t *testing.T) {
		dir := t.TempDir()
		big := strings.Repeat("line of output\n", 10_000)
		doc := `<testsuites><testsuite><testcase classname="t" name="x"><properties><property name="hostemu_nodeid" value="t.py::x"/></properties><system-out>` + big + `the end</system-out></testcase></testsuite></testsuites>`
		os.WriteFile(filepath.Join(dir, pytestReport), []byte(doc), 0o644)
		got, err := r.Results(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := got["t.py::x"].Output
		if len(out) > pytestMaxOutput+10 || !strings.HasSuffix(strings.TrimSpace(out), "the end") || !strings.HasPrefix(out, "…\nline of output\n") {
			t.Errorf("Output of %d bytes: %q…%q", len(out), out[:min(40, len(out))], out[max(0, len(out)-40):])
		}
	})
}

func TestPytestKey(t *testing.T) {
	r := pytestRunner{}
	if k := r.Key(Hello{Test: "tests/test_a.py::test_x[1]"}); k != "tests/test_a.py::test_x[1]" {
		t.Errorf("Key = %q", k)
	}
	if k := r.Key(Hello{}); k != "" {
		t.Errorf("Key of a nameless hello = %q, want \"\"", k)
	}
}

// FuzzPytestResults: whatever a JUnit report or the plugin's lines hold, neither reader
// panics, names a test "" or keeps more output than its bound.
func FuzzPytestResults(f *testing.F) {
	for _, name := range []string{"junit.xml", "junit-xdist.xml", "junit-legacy.xml", "junit-noplugin.xml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pytest", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`<testcase classname="a" name="b"><properties><property name="hostemu_nodeid" value="a.py::b"/></properties><error message="x"/></testcase>`))
	for _, name := range []string{"outcomes.jsonl", "outcomes-xdist.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pytest", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := pytestOutcomes(bytes.NewReader(data))
		if err != nil {
			return
		}
		for id, o := range got {
			if id == "" {
				t.Errorf("Results named a test \"\": %+v", o)
			}
			if len(o.Output) > pytestMaxOutput+8 {
				t.Errorf("%s: Output of %d bytes", id, len(o.Output))
			}
		}
		if len(got) > 0 && !bytes.Contains(data, []byte(pytestNodeID)) {
			t.Errorf("Results named tests of a report without %s: %v", pytestNodeID, got)
		}
		lines, err := pytestLines(bytes.NewReader(data))
		if err != nil {
			return
		}
		for id, o := range lines {
			if id == "" || o.Output == "" || len(o.Output) > pytestMaxOutput+8 {
				t.Errorf("pytestLines: %q: %+v", id, o)
			}
		}
	})
}

// A node id with a space (a parameter's) is shown whole: Shorten is Go's.
func TestPytestNamesShownWhole(t *testing.T) {
	r := &Run{Baseline: Baseline{Runner: "pytest"}, Mutants: []Mutant{{Test: "tests/test_a.py::test_x[a b]"}, {Test: "tests/test_a.py::test_x[a c]"}}}
	r.Shorten()
	if r.Mutants[0].Test != "tests/test_a.py::test_x[a b]" || r.Mutants[1].Test != "tests/test_a.py::test_x[a c]" {
		t.Errorf("Shorten made %q and %q of pytest node ids", r.Mutants[0].Test, r.Mutants[1].Test)
	}
}
