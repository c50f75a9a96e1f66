package mutate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

func init() {
	register("go", func(argv []string) bool {
		return len(argv) >= 2 && words(argv)[0] == "go" && argv[1] == "test"
	}, func() Runner { return goRunner{} })
}

// goRunner is `go test`: its -json stream tells each test's outcome and output; the Go
// testkit names a world's test by its package's import path and t.Name().
type goRunner struct{}

func (goRunner) Name() string { return "go" }
func (goRunner) Alone() bool  { return false }

// Key is "import/path TestName/sub": the package, a space (which neither an import path
// nor a test's name holds: go test writes a subtest's spaces as _), the test's name.
func (goRunner) Key(h Hello) string {
	if h.Test == "" {
		return ""
	}
	if h.Package == "" {
		return h.Test
	}
	return h.Package + " " + h.Test
}

// maxTestOutput bounds the output kept per test (its tail).
const maxTestOutput = 16 << 10

// Command adds -json and -count=1 (a cached result would not meet the mutant) to
// `go test`, and, for only, a -run of the tests' top-level names (their subtests and
// siblings' subtests may run too; only the named tests' worlds are armed). A -run of
// the user's is overridden by ours (the last wins), which only narrows what the
// baseline ran. Ours go before -args, which hands the rest to the test binary.
func (goRunner) Command(argv []string, dir string, only []string) ([]string, error) {
	if len(argv) < 2 || argv[1] != "test" {
		return nil, fmt.Errorf("mutate: the go runner needs `go test ...`, not %q", strings.Join(argv, " "))
	}
	flags := []string{"-json", "-count=1"}
	if only != nil {
		flags = append(flags, "-run", goRunPattern(only))
	}
	rest := argv[2:]
	at := len(rest)
	for i, a := range rest {
		if a == "-args" || a == "--args" {
			at = i
			break
		}
	}
	out := append([]string{}, argv[:2]...)
	out = append(out, rest[:at]...)
	out = append(out, flags...)
	return append(out, rest[at:]...), nil
}

// testEvent is one line of go test -json.
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Results reads the -json stream from the run's output; lines that are not JSON (the
// build's errors, a test binary's stderr) are skipped.
func (goRunner) Results(dir string, output []byte) (map[string]Outcome, error) {
	res := map[string]Outcome{}
	outs := testOutputs{}
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev testEvent
		if json.Unmarshal(line, &ev) != nil || ev.Test == "" {
			continue
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "output":
			outs.add(key, ev.Output)
		case "pass", "skip":
			res[key] = Outcome{}
		case "fail":
			res[key] = Outcome{Failed: true}
		}
	}
	for k, o := range res {
		o.Output = outs.of(k)
		res[k] = o
	}
	return res, nil
}

// goRunPattern is the -run pattern of the top-level tests of keys ("pkg Test/sub"):
// ^(TestA|TestB)$, each name quoted.
func goRunPattern(keys []string) string {
	top := map[string]bool{}
	for _, k := range keys {
		_, name, _ := strings.Cut(k, " ")
		name, _, _ = strings.Cut(name, "/")
		top[regexp.QuoteMeta(name)] = true
	}
	names := make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	return "^(" + strings.Join(names, "|") + ")$"
}

// testOutputs keeps the tail of each test's output, at most maxTestOutput bytes a test
// (twice that while it is written).
type testOutputs map[string]*bytes.Buffer

func (o testOutputs) add(test, text string) {
	b := o[test]
	if b == nil {
		b = &bytes.Buffer{}
		o[test] = b
	}
	if b.Len() > 2*maxTestOutput {
		t := tail(b.Bytes(), maxTestOutput)
		b.Reset()
		b.Write(t)
	}
	b.WriteString(text)
}

// of is the tail of test's output ("" when it wrote none).
func (o testOutputs) of(test string) string {
	if b := o[test]; b != nil {
		return string(tail(b.Bytes(), maxTestOutput))
	}
	return ""
}
