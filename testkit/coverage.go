package testkit

import (
	"context"
	"net/http"
	"sync"

	"github.com/hostemu/hostemu/emulator"
)

// Coverage is what this emulator's clients exercised so far (GET /_emulator/coverage
// of its world): every documented operation and answer, lifecycle edge and fault
// action, with how often each was seen. See docs/coverage.md.
func (e *Emulator) Coverage() emulator.Coverage {
	e.tb.Helper()
	var c emulator.Coverage
	e.call(http.MethodGet, "/_emulator/coverage", nil, &c)
	return c
}

// ResetCoverage starts this world's coverage afresh.
func (e *Emulator) ResetCoverage() {
	e.tb.Helper()
	e.call(http.MethodDelete, "/_emulator/coverage", nil, nil)
}

// collected is the coverage of every emulator of this process whose test has ended:
// each adds its world's when its test ends (before Start's shuts down, before
// Connect's namespace is deleted).
var collected struct {
	sync.Mutex
	r    emulator.Coverage
	some bool
}

// collect adds e's coverage to the process's; a failure to read it is logged, not a
// test failure (the test itself is over).
func (r *remote) collect(tb interface{ Logf(string, ...any) }) {
	var c emulator.Coverage
	if err := r.do(context.Background(), http.MethodGet, "/_emulator/coverage", nil, &c); err != nil {
		tb.Logf("testkit: reading coverage at the end of the test: %v", err)
		return
	}
	collected.Lock()
	defer collected.Unlock()
	if collected.some {
		c = emulator.MergeCoverage(collected.r, c)
	}
	collected.r, collected.some = c, true
}

// CollectedCoverage is the union of the coverage of every emulator this process started
// or connected to whose test has ended: what a package's tests exercised, for a
// TestMain to check after m.Run (see the package example). Tests still running are
// not in it yet.
func CollectedCoverage() emulator.Coverage {
	collected.Lock()
	defer collected.Unlock()
	if !collected.some {
		return emulator.MergeCoverage()
	}
	return emulator.MergeCoverage(collected.r)
}

// IgnoreCoverage is cov with the rows a coverage file ignores (the .hostemu-coverage.yaml
// `hostemu coverage` reads) marked ignored and left out of its totals: what a TestMain
// checks against its minimums, as the command would. file "" is that name in the
// working directory (the package's, under go test), which may be absent; a file that
// does not read is an error naming its line and column.
func IgnoreCoverage(cov emulator.Coverage, file string) (emulator.Coverage, error) {
	ig, err := emulator.ReadCoverageIgnore(file)
	if err != nil {
		return cov, err
	}
	return ig.Apply(cov), nil
}
