package mutate

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The pytest runner: tests are named by their node ids (tests/test_client.py::
// TestX::test_create[prod]), which the hostemu pytest plugin tells the worlds (the
// hello's test) and writes into each test's JUnit entry as the property hostemu_nodeid
// (JUnit's classname and name cannot give a node id back: a parameter with "." or
// "::", a class nested in a class, a module in a package all read alike). A run is
// narrowed with the plugin's --hostemu-only FILE, which deselects every test whose
// node id FILE does not list: node ids as arguments are relative to the invocation
// directory, not pytest's rootdir, and -k matches substrings.

const (
	// pytestReport is the JUnit report's name under a run's directory.
	pytestReport = "pytest-junit.xml"
	// pytestOnly lists the node ids a narrowed run runs, one a line.
	pytestOnly = "pytest-only.txt"
	// pytestProgress is the plugin's --hostemu-outcomes: each test phase's outcome as it
	// ends, a JSON line, for a run stopped before pytest wrote its JUnit report.
	pytestProgress = "pytest-outcomes.jsonl"
	// pytestNodeID is the plugin's JUnit property of a test's node id.
	pytestNodeID = "hostemu_nodeid"
	// pytestMaxOutput bounds one test's Output (its tail is kept).
	pytestMaxOutput = 32 << 10
)

func init() {
	register("pytest", func(argv []string) bool { return pytestAt(argv) >= 0 }, func() Runner { return pytestRunner{} })
}

// pytestAt is the index of the argument that runs pytest in argv, or -1: a word
// "pytest" or "py.test" that is the program itself (pytest, .venv/bin/pytest), the
// module of -m (python -m pytest, coverage run -m pytest) or what a Python tool runs
// (uv run pytest, poetry run pytest, pdm run, pipenv run, hatch run, pipx run, uvx
// pytest, env X=1 pytest). A "pytest" anywhere else (a directory: npx vitest run
// tests/pytest) is not pytest: name the runner with --runner pytest then.
func pytestAt(argv []string) int {
	w := words(argv)
	for i, x := range w {
		if x != "pytest" && x != "py.test" {
			continue
		}
		if i == 0 {
			return i
		}
		if strings.ContainsAny(argv[i], `/\`) {
			continue // a path: only the program may be given by one
		}
		prev := argv[i-1]
		switch w[i-1] {
		case "-m", "uvx", "env":
			return i
		case "run", "exec":
			if i >= 2 && pythonTools[w[i-2]] {
				return i // uv run pytest, poetry run pytest
			}
		}
		if strings.Contains(prev, "=") && !strings.HasPrefix(prev, "-") {
			return i // env X=1 pytest
		}
	}
	return -1
}

// pythonTools are the programs whose "run" (or "exec") runs a Python environment's program.
var pythonTools = map[string]bool{"uv": true, "poetry": true, "pdm": true, "pipenv": true, "hatch": true, "pipx": true, "rye": true}

type pytestRunner struct{}

func (pytestRunner) Name() string { return "pytest" }

// Key is the hello's node id.
func (pytestRunner) Key(h Hello) string { return h.Test }

// Alone is false: the plugin tells each world its test.
func (pytestRunner) Alone() bool { return false }

// Command adds, after the user's arguments (so that they win over the user's own
// --junitxml, -x and -o junit_logging; before a "--" if the command has one):
// --junitxml=DIR/pytest-junit.xml, -p no:cacheprovider (no .pytest_cache written by
// the runs), -o junit_logging=all (the tests' captured output in the report, for a
// survivor's), --maxfail=0 (a mutant's failure stops no other test, whatever -x the
// user passed), --hostemu-outcomes=DIR/pytest-outcomes.jsonl (the plugin's line per
// test phase as it ends) and, with only, --hostemu-only=DIR/pytest-only.txt listing
// the node ids. A command that does not run pytest itself (--runner pytest) must pass
// trailing arguments on to it.
func (pytestRunner) Command(argv []string, dir string, only []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("mutate: no command to run")
	}
	add := []string{"--junitxml=" + filepath.Join(dir, pytestReport), "-p", "no:cacheprovider", "-o", "junit_logging=all", "--maxfail=0",
		"--hostemu-outcomes=" + filepath.Join(dir, pytestProgress)}
	if only != nil {
		var b strings.Builder
		for _, id := range only {
			if id == "" || strings.ContainsAny(id, "\r\n") {
				return nil, fmt.Errorf("mutate: %q is not a pytest node id", id)
			}
			b.WriteString(id)
			b.WriteByte('\n')
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
		p := filepath.Join(dir, pytestOnly)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
		add = append(add, "--hostemu-only="+p)
	}
	at := len(argv)
	for i := max(pytestAt(argv), 0) + 1; i < len(argv); i++ {
		if argv[i] == "--" {
			at = i
			break
		}
	}
	out := make([]string, 0, len(argv)+len(add))
	out = append(out, argv[:at]...)
	out = append(out, add...)
	return append(out, argv[at:]...), nil
}

// pytestCase is what Results reads of a <testcase>.
type pytestCase struct {
	Classname string `xml:"classname,attr"`
	Name      string `xml:"name,attr"`
	Props     []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Failures []junitText `xml:"failure"`
	Errors   []junitText `xml:"error"`
	Skipped  []junitText `xml:"skipped"`
	Out      []string    `xml:"system-out"`
	Err      []string    `xml:"system-err"`
}

func (c pytestCase) nodeID() string {
	for _, p := range c.Props {
		if p.Name == pytestNodeID {
			return p.Value
		}
	}
	return ""
}

// Results reads DIR/pytest-junit.xml: a test failed when an entry of its has a
// <failure> or an <error> (setup and teardown errors included; a skip, an xfail and a
// non-strict xpass pass). Its Output is the failures' text, a skip's reason and the
// captured output (a line saying there was none, rather than nothing: mutate would show
// the whole run's output, other tests' failures included, for a survivor).
//
// A test whose call failed and whose teardown raised has two entries, the first
// without the node id: it is matched to the second by classname and name. Without the
// report (pytest was stopped before its session's end: the run's --timeout, a signal,
// os._exit), the outcomes are those of the tests whose teardown the plugin's
// --hostemu-outcomes lines show, so that one hanging test does not take the round's
// finished ones with it. Neither file (pytest ran no test: a usage error), and a report
// of tests none of which has a node id (the hostemu plugin is not loaded), are errors:
// the run's mutants are not_run, never killed by a run that could not tell.
func (pytestRunner) Results(dir string, _ []byte) (map[string]Outcome, error) {
	path := filepath.Join(dir, pytestReport)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		// pytest writes it at the session's end: without it, pytest was stopped (the
		// run's --timeout, a signal, os._exit) and the plugin's lines tell which tests
		// had finished, or it never ran a test (a usage error): not a kill.
		return pytestProgressed(filepath.Join(dir, pytestProgress))
	}
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer f.Close()
	out, err := pytestOutcomes(f)
	if err != nil {
		// a report cut short (the run killed while pytest wrote it): the lines tell more
		if lines, lerr := pytestProgressed(filepath.Join(dir, pytestProgress)); lerr == nil && len(lines) > 0 {
			return lines, nil
		}
		return nil, fmt.Errorf("mutate: pytest's report %s: %w", path, err)
	}
	return out, nil
}

// pytestOutcomes reads a JUnit report of pytest's (see Results).
func pytestOutcomes(r io.Reader) (map[string]Outcome, error) {
	cases, err := readPytestJUnit(io.LimitReader(r, maxReport+1))
	if err != nil {
		return nil, err
	}
	byName := map[[2]string]string{} // classname, name → node id ("" when two share them)
	for _, c := range cases {
		if id := c.nodeID(); id != "" {
			k := [2]string{c.Classname, c.Name}
			if old, ok := byName[k]; ok && old != id {
				byName[k] = ""
			} else {
				byName[k] = id
			}
		}
	}
	out := map[string]Outcome{}
	var nameless []string
	for _, c := range cases {
		id := c.nodeID()
		if id == "" {
			id = byName[[2]string{c.Classname, c.Name}]
		}
		if id == "" {
			nameless = append(nameless, strings.TrimPrefix(c.Classname+"::"+c.Name, "::"))
			continue
		}
		o := out[id]
		o.Failed = o.Failed || len(c.Failures) > 0 || len(c.Errors) > 0
		o.Output = pytestTail(o.Output+c.output(), pytestMaxOutput)
		out[id] = o
	}
	for id, o := range out {
		if o.Output == "" {
			// the report holds the test's output, which is nothing: say so, rather than
			// leave mutate to show the whole run's (other tests' failures)
			o.Output = id + ": passed; pytest captured no output of it\n"
			out[id] = o
		}
	}
	if len(out) == 0 && len(nameless) > 0 {
		return nil, fmt.Errorf("it names no test by its node id (%s): is hostemu's pytest plugin loaded (not -p no:hostemu), or did collection fail?", strings.Join(pytestFirst(nameless, 3), ", "))
	}
	return out, nil
}

// pytestProgressed reads the plugin's --hostemu-outcomes lines: a test whose teardown
// ended has an outcome, failed when a phase of it failed.
func pytestProgressed(path string) (map[string]Outcome, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mutate: pytest wrote no report (%s) and ran no test: it stopped before (see its output)", pytestReport)
	}
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer f.Close()
	return pytestLines(io.LimitReader(f, maxReport))
}

// pytestLines reads --hostemu-outcomes lines; a line cut short by the run's end, or
// that is not one, is skipped.
func pytestLines(r io.Reader) (map[string]Outcome, error) {
	type phase struct {
		NodeID  string `json:"nodeid"`
		When    string `json:"when"`
		Outcome string `json:"outcome"`
		Text    string `json:"text"`
	}
	seen := map[string]*Outcome{}
	done := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var p phase
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.NodeID == "" {
			continue
		}
		o := seen[p.NodeID]
		if o == nil {
			o = &Outcome{}
			seen[p.NodeID] = o
		}
		if p.Outcome == "failed" {
			o.Failed = true
			o.Output = pytestTail(o.Output+strings.TrimSpace(p.Text)+"\n", pytestMaxOutput)
		}
		if p.When == "teardown" {
			done[p.NodeID] = true
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return nil, err
	}
	out := map[string]Outcome{}
	for id := range done {
		o := *seen[id]
		if o.Output == "" {
			o.Output = id + ": passed (the run was stopped before pytest's report; its output is not known)\n"
		}
		out[id] = o
	}
	return out, nil
}

// readPytestJUnit reads every <testcase> of a JUnit report, however its suites nest.
func readPytestJUnit(r io.Reader) ([]pytestCase, error) {
	lr := &pytestCounter{r: r}
	dec := xml.NewDecoder(lr)
	var cases []pytestCase
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.n > maxReport {
				return nil, fmt.Errorf("over %d bytes", maxReport)
			}
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "testcase" {
			var c pytestCase
			if err := dec.DecodeElement(&c, &se); err != nil {
				return nil, err
			}
			cases = append(cases, c)
		}
	}
	if lr.n > maxReport {
		return nil, fmt.Errorf("over %d bytes", maxReport)
	}
	return cases, nil
}

type pytestCounter struct {
	r io.Reader
	n int64
}

func (c *pytestCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// output is an entry's failures, errors and captured output, without pytest's empty
// "---- Captured X ----" sections.
func (c pytestCase) output() string {
	var b strings.Builder
	for _, t := range append(append([]junitText{}, c.Failures...), c.Errors...) {
		s := strings.TrimSpace(t.Text)
		if s == "" {
			s = t.Message
		}
		if s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	for _, t := range c.Skipped {
		b.WriteString("skipped: " + strings.TrimSpace(t.Message) + "\n")
	}
	for _, s := range append(append([]string{}, c.Out...), c.Err...) {
		for _, sec := range splitCaptured(s) {
			b.WriteString(sec)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// splitCaptured is the non-empty sections of a <system-out> or <system-err> that
// junit_logging=all wrote ("----- Captured Out -----" then the text), headers kept.
func splitCaptured(s string) []string {
	var out []string
	var head string
	var body []string
	flush := func() {
		text := strings.TrimSpace(strings.Join(body, "\n"))
		if text != "" {
			if head != "" {
				text = head + "\n" + text
			}
			out = append(out, text)
		}
		body = nil
	}
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "----") && strings.HasSuffix(t, "----") && strings.Contains(t, " Captured ") {
			flush()
			head = t
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// pytestTail is s's last n bytes, cut at a line's start where one is near.
func pytestTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "…\n" + strings.ToValidUTF8(s, "")
}

func pytestFirst(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
