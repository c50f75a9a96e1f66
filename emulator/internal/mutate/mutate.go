// Package mutate runs a client's test suite against documented error answers it may
// not notice: `hostemu mutate -- COMMAND`. See docs/mutate.md.
//
// A run has three parts. A Coordinator, an HTTP server on 127.0.0.1, which the testkits
// find through the HOSTEMU_MUTANT environment variable: each world a test makes says
// hello (which test it belongs to) and is handed the fault to arm, if any; at its end
// it posts its coverage, from which the baseline learns which operations each test
// called. A Runner per test runner (go test, vitest, jest, node --test, pytest), which
// adds the runner's machine-readable report to the command, reads each test's outcome
// from it, and narrows a run to some tests. And the rounds: the baseline, then K runs
// of the suite in which each test meets its next untried mutant (K is the most mutants
// any one test has), at most Parallel at a time.
package mutate

import (
	"encoding/json"
	"fmt"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// Env is the environment variable that tells a testkit where the coordinator of the
// current run is: a URL, http://127.0.0.1:PORT/r/ROUND. Unset outside a mutation run.
const Env = "HOSTEMU_MUTANT"

// Hello is what a testkit posts to $HOSTEMU_MUTANT/world when a test makes a world:
// which test it belongs to, as the testkit can tell. Test is the runner's own name for
// it (Go: t.Name(); Vitest and Jest: the describe blocks and the test's title joined
// by spaces, as their JSON reporters' fullName; pytest: the node id); Package (Go: the
// package's import path) and File (JS: the test file's absolute path) tell tests of the
// same name apart. A testkit that cannot tell sends {} and the coordinator attributes
// the world to the run's only test (runners whose tests run alone; see Runner.Alone).
type Hello struct {
	Test    string `json:"test,omitempty"`
	Package string `json:"package,omitempty"`
	File    string `json:"file,omitempty"`
}

// Welcome is the coordinator's answer to a Hello. Fault, when not null, is a fault
// (the body of POST /_emulator/faults) the testkit adds to the world before the test
// gets it; a testkit that cannot add it fails the test (a mutant never injected must
// not survive). Report asks the testkit to post the world's coverage to
// $HOSTEMU_MUTANT/coverage when its test ends, before the world goes: {"world": ID,
// "coverage": <GET /_emulator/coverage>}. World identifies the world in that post.
type Welcome struct {
	World  string         `json:"world"`
	Fault  map[string]any `json:"fault"`
	Report bool           `json:"report"`
}

// Report is what a testkit posts to $HOSTEMU_MUTANT/coverage at a world's end.
type Report struct {
	World string `json:"world"`
	// Coverage is GET /_emulator/coverage as the world answered it; the coordinator reads
	// the part Coverage describes and ignores the rest (hostemu's answer may grow).
	Coverage json.RawMessage `json:"coverage"`
}

// Coverage is the part of GET /_emulator/coverage the coordinator reads: which
// operations the world's clients called.
type Coverage struct {
	Operations []struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		Seen   int64  `json:"seen"`
	} `json:"operations"`
}

// Outcome is how one test ended in one run, as the runner's report tells it.
type Outcome struct {
	Failed bool
	// Output is the test's own output when the report holds it ("" when not).
	Output string
}

// Runner is what mutate needs of a test runner.
type Runner interface {
	// Name is the runner's name for --runner and the report: go, vitest, jest, node, pytest.
	Name() string
	// Key is the test a Hello names, in the form Results uses; "" when the hello does
	// not name one (the coordinator then takes the run's only test).
	Key(h Hello) string
	// Command is argv (the user's COMMAND) changed to write the runner's machine-readable
	// report under dir (a fresh directory per run) and, when only is not nil, to run only
	// those tests (keys as Results gives them; a test's parents may run too, but no other
	// test that can make a world).
	Command(argv []string, dir string, only []string) ([]string, error)
	// Results reads a finished run's report from dir (and, for runners that write it
	// there, the run's standard output): each test's outcome by key. A test absent from
	// the map did not finish (the run was killed or crashed).
	Results(dir string, stdout []byte) (map[string]Outcome, error)
	// Alone reports that the runner's testkit cannot tell which test made a world: the
	// baseline then runs each test alone to learn its operations, and each mutant runs
	// with its test alone.
	Alone() bool
}

// Result is what became of a mutant.
type Result string

const (
	Killed   Result = "killed"
	Survived Result = "survived"
	TimedOut Result = "timed_out"
	NotRun   Result = "not_run"
)

// Reset is the code of the mutant that resets the connection (break: reset).
const Reset = "reset"

// Mutant is one documented error answer (or a reset) of one operation, injected at one
// test's first call of it.
type Mutant struct {
	Test      string `json:"test"`
	Operation string `json:"operation"` // the operationId (createDeployment)
	Method    string `json:"method"`
	Path      string `json:"path"` // the route template (/v1/deployments/{id})
	Code      string `json:"code"` // the error code, or "reset"
	Status    int    `json:"status,omitempty"`
	Result    Result `json:"result"`
	// Output is the tail of the run's output, for a survivor (what the test printed while
	// it passed under the mutant) and a timeout.
	Output string `json:"output,omitempty"`
	// Why says why a mutant was not run or timed out, when there is more to say.
	Why string `json:"why,omitempty"`
}

// Fault is the fault that injects m: its operation's first call answers its error (or
// is reset), once.
func (m Mutant) Fault() map[string]any {
	f := map[string]any{"match": map[string]any{"operation": m.Operation}, "times": 1}
	if m.Code == Reset {
		f["break"] = "reset"
	} else {
		f["error"] = m.Code
	}
	return f
}

// String is the mutant as the text report names it.
func (m Mutant) String() string {
	code := m.Code
	if m.Status != 0 {
		code = fmt.Sprintf("%d %s", m.Status, m.Code)
	}
	return fmt.Sprintf("%s: %s (%s %s) answers %s", m.Test, m.Operation, m.Method, m.Path, code)
}

// glob reports whether name matches one of the comma-separated patterns ("*" any run
// of characters); an empty list matches everything.
func glob(list []string, name string) bool {
	if len(list) == 0 {
		return true
	}
	for _, p := range list {
		if fault.PathMatch(p, name) {
			return true
		}
	}
	return false
}
