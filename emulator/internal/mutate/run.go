package mutate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// maxOutput bounds how much of one run's output (standard output and error together)
// mutate reads back: the runner's report when it is the output (go test -json), and
// the tail shown for a survivor. A run may print more; the rest is not read.
const maxOutput = 64 << 20

// outputsHeld bounds the runs' outputs held at once, every parallel run together: a run
// reads its output (at most maxOutput) only once its size is taken from this budget,
// and gives it back once its report is read (only its tail is kept). Without it,
// --parallel 256 runs of a chatty suite could hold 256 × 64 MiB.
var outputsHeld = semaphore.NewWeighted(outputsBudget)

// outputsBudget is outputsHeld's size: no run is charged more (it would wait forever).
const outputsBudget = 256 << 20

// maxReport bounds a runner's report file (JSON, JUnit, pytest's outcome lines): a
// suite's report is a few MB at most.
const maxReport = 256 << 20

// tailBytes is how much of a run's output a survivor or a failing baseline shows.
const tailBytes = 4 << 10

// baselineTimeout is the least bound on the baseline's run, whatever --timeout says: it
// builds the suite.
const baselineTimeout = 10 * time.Minute

// Config is one mutation run.
type Config struct {
	Argv   []string // the test command
	Runner Runner
	Dir    string   // where to run it ("" the working directory)
	Env    []string // its environment (nil: this process's)
	// Tests, Operations and Codes narrow the mutants (globs, * any run of characters);
	// empty: all.
	Tests, Operations, Codes []string
	Budget                   time.Duration // 0: none
	Parallel                 int
	Timeout                  time.Duration // per run of the command
	Catalogue                *Catalogue
	// Progress, when not nil, gets a line per finished run.
	Progress io.Writer
	// Shell runs the guard that leads each run's process group (guardShell, /bin/sh,
	// when ""; none where there are no process groups). Execute refuses to start when
	// it cannot be run. Tests name a missing one.
	Shell string
}

// shell is Shell, or guardShell.
func (c Config) shell() string {
	if c.Shell == "" {
		return guardShell
	}
	return c.Shell
}

// Baseline is what the report says of the run without mutants.
type Baseline struct {
	Runner     string `json:"runner"`
	Command    string `json:"command"`
	Passed     bool   `json:"passed"`
	Tests      int    `json:"tests"`       // tests that passed
	WithWorlds int    `json:"with_worlds"` // of which called an operation through a testkit world
	// Skipped are the tests of a runner whose tests run alone that could not be run
	// alone, with why: they are not mutated.
	Skipped []SkippedTest `json:"skipped,omitempty"`
	// Nameless counts worlds no test could be named for (made outside a test).
	Nameless   int    `json:"nameless_worlds,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Output     string `json:"output,omitempty"` // the tail, when it failed
}

// SkippedTest is a test the baseline could not prepare for mutants.
type SkippedTest struct {
	Test string `json:"test"`
	Why  string `json:"why"`
}

// Outcome of the whole run.
type Run struct {
	Score      float64  `json:"score"`
	Mutants    []Mutant `json:"mutants"`
	Baseline   Baseline `json:"baseline"`
	Runs       int      `json:"runs"` // runs of the command after the baseline
	DurationMS int64    `json:"duration_ms"`
	// Interrupted says mutate was stopped (SIGINT, SIGTERM) before every mutant ran: the
	// mutants left are not_run, and the report is partial.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ErrBaseline is the error of a baseline that did not pass (exit 2).
var ErrBaseline = errors.New("the baseline failed")

// Execute makes the mutation run: the baseline, then the mutants.
func Execute(ctx context.Context, cfg Config) (*Run, error) {
	if cfg.Parallel < 1 {
		cfg.Parallel = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if err := guardMissing(cfg.shell()); err != nil {
		return nil, err // before the baseline: not the suite's failure
	}
	co, err := NewCoordinator()
	if err != nil {
		return nil, err
	}
	defer co.Close()
	x := &executor{cfg: cfg, co: co, start: time.Now()}
	run := &Run{Mutants: []Mutant{}}
	run.Baseline.Runner = cfg.Runner.Name()
	run.Baseline.Command = strings.Join(cfg.Argv, " ")

	called, err := x.baseline(ctx, &run.Baseline)
	if err != nil {
		return run, err
	}
	mutants, err := x.mutants(called)
	if err != nil {
		return run, err
	}
	run.Mutants = mutants
	if p, ok := cfg.Runner.(preparer); ok {
		tmp, err := os.MkdirTemp("", "hostemu-mutate-bin-")
		if err != nil {
			return run, err
		}
		defer os.RemoveAll(tmp)
		keys := make([]string, 0, len(mutants))
		for _, m := range mutants {
			keys = append(keys, m.Test)
		}
		began := time.Now()
		r, why := p.Prepare(ctx, cfg.Argv, cfg.Dir, tmp, keys)
		if why != "" {
			x.progress("%s", why)
		} else {
			x.progress("test binaries built in %s", time.Since(began).Round(time.Millisecond))
		}
		x.cfg.Runner = r
	}
	x.runMutants(ctx, run)
	run.Interrupted = ctx.Err() != nil
	run.Score = score(run.Mutants)
	run.DurationMS = time.Since(x.start).Milliseconds()
	return run, nil
}

// score is killed / (killed + survived + timed out); 1 when none ran.
func score(ms []Mutant) float64 {
	var killed, ran int
	for _, m := range ms {
		switch m.Result {
		case Killed:
			killed++
			ran++
		case Survived, TimedOut:
			ran++
		}
	}
	if ran == 0 {
		return 1
	}
	return float64(killed) / float64(ran)
}

type executor struct {
	cfg   Config
	co    *Coordinator
	start time.Time
	held  *semaphore.Weighted // the budget of outputs held (outputsHeld when nil; a test's own)
	// heldSize is held's size (outputsBudget when 0)
	heldSize int64
}

// result is one finished run of the command.
type result struct {
	outcomes map[string]Outcome
	output   []byte // the tail
	exitErr  error
	timedOut bool
	err      error // the run could not be made or read
	elapsed  time.Duration
}

// once runs the command for round r, narrowed to only (nil: all tests).
func (x *executor) once(ctx context.Context, r *round, only []string) result {
	dir, err := os.MkdirTemp("", "hostemu-mutate-")
	if err != nil {
		return result{err: err}
	}
	defer os.RemoveAll(dir)
	argv, err := x.cfg.Runner.Command(x.cfg.Argv, dir, only)
	if err != nil {
		return result{err: err}
	}
	id, url := x.co.open(r)
	defer x.co.close(id)

	out, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		return result{err: err}
	}
	defer out.Close()
	bound := x.cfg.Timeout
	if r.baseline && r.only == "" && bound < baselineTimeout {
		bound = baselineTimeout // the baseline builds the suite too
	}
	rctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := exec.CommandContext(rctx, argv[0], argv[1:]...)
	cmd.Dir = x.cfg.Dir
	if d, ok := x.cfg.Runner.(dirRunner); ok && len(only) > 0 {
		cmd.Dir = d.Dir(only)
	}
	cmd.Env = runEnv(x.cfg.Env, url, filepath.Join(dir, "artifacts"))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	endGroup, err := killGroupWith(x.cfg.shell(), cmd)
	if err != nil {
		return result{err: err}
	}
	began := time.Now()
	runErr := cmd.Run()
	endGroup() // what the run left running goes with it
	res := result{exitErr: runErr, elapsed: time.Since(began)}
	if rctx.Err() == context.DeadlineExceeded {
		res.timedOut = true
	}
	outSize := int64(maxOutput)
	if fi, err := out.Stat(); err == nil {
		outSize = min(fi.Size(), maxOutput)
	}
	// the runner's report files (Results reads them) are charged with the output: read
	// outside the budget, --parallel runs could hold 256 MiB of report each
	budget, size := x.held, x.heldSize
	if budget == nil {
		budget = outputsHeld
	}
	if size == 0 {
		size = outputsBudget
	}
	held := min(outSize+reportBytes(dir), size)
	if err := budget.Acquire(context.WithoutCancel(ctx), held); err != nil {
		return result{err: err}
	}
	defer budget.Release(held)
	output, err := readBounded(filepath.Join(dir, "output"), outSize)
	if err != nil {
		return result{err: err}
	}
	res.output = tail(output, tailBytes)
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) && !res.timedOut {
		res.err = fmt.Errorf("running %s: %w", argv[0], runErr)
		return res
	}
	res.outcomes, err = x.cfg.Runner.Results(dir, output)
	if err != nil && !res.timedOut {
		res.err = err
	}
	return res
}

// runEnv is the environment of a run: the base with HOSTEMU_MUTANT set, failure
// bundles kept out of the user's tree, and no coverage collection.
func runEnv(base []string, url, artifacts string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+2)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case Env, "HOSTEMU_ARTIFACTS", "HOSTEMU_COVERAGE_DIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, Env+"="+url, "HOSTEMU_ARTIFACTS="+artifacts)
}

// reportBytes is what the files a run wrote in dir beside its output (a runner's
// report: Jest's, Vitest's and node's, pytest's JUnit and outcome lines) take to read,
// each at most maxReport (a larger one is refused unread).
func reportBytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if e.Name() == "output" || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			n += min(fi.Size(), maxReport)
		}
	}
	return n
}

// readBounded reads at most the first n bytes of path (readFirst).
func readBounded(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFirst(f, n)
}

// readFirst reads at most the first n bytes of f into one buffer of n bytes: what a
// run's output or report is charged (outputsHeld) is what it takes, not io.ReadAll's
// growth.
func readFirst(f *os.File, n int64) ([]byte, error) {
	b := make([]byte, n)
	got, err := io.ReadFull(f, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil // shorter than n
	}
	return b[:got], err
}

func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return append([]byte(nil), b...)
	}
	t := b[len(b)-n:]
	if i := bytes.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
		t = t[i+1:]
	}
	return append([]byte(nil), t...)
}

func (x *executor) progress(format string, args ...any) {
	if x.cfg.Progress != nil {
		fmt.Fprintf(x.cfg.Progress, "hostemu mutate: "+format+"\n", args...)
	}
}

// baseline runs the suite as it is and learns which operations each test called.
func (x *executor) baseline(ctx context.Context, b *Baseline) (map[string]map[string]bool, error) {
	r := &round{runner: x.cfg.Runner, baseline: true}
	res := x.once(ctx, r, nil)
	b.DurationMS = res.elapsed.Milliseconds()
	if res.err != nil {
		b.Output = string(res.output)
		return nil, fmt.Errorf("%w: %v", ErrBaseline, res.err)
	}
	failed := []string{}
	for k, o := range res.outcomes {
		if o.Failed {
			failed = append(failed, k)
		}
	}
	sort.Strings(failed)
	if res.timedOut || res.exitErr != nil || len(failed) > 0 {
		b.Output = string(res.output)
		why := "it exited with " + fmt.Sprint(res.exitErr)
		switch {
		case res.timedOut:
			why = fmt.Sprintf("it ran over %s", max(x.cfg.Timeout, baselineTimeout))
		case len(failed) > 0:
			why = "these tests failed: " + strings.Join(failed, ", ")
		}
		return nil, fmt.Errorf("%w: %s", ErrBaseline, why)
	}
	b.Passed = true
	for _, o := range res.outcomes {
		if !o.Failed {
			b.Tests++
		}
	}
	x.progress("baseline passed: %d tests in %s", b.Tests, res.elapsed.Round(time.Millisecond))
	called := r.called
	b.Nameless = r.nameless
	if x.cfg.Runner.Alone() {
		// the testkit cannot name tests: run each alone to learn its operations
		keys := make([]string, 0, len(res.outcomes))
		for k := range res.outcomes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		called = map[string]map[string]bool{}
		var mu sync.Mutex
		x.parallel(len(keys), func(i int) {
			k := keys[i]
			r := &round{runner: x.cfg.Runner, baseline: true, only: k}
			res := x.once(ctx, r, []string{k})
			mu.Lock()
			defer mu.Unlock()
			if o, ok := res.outcomes[k]; res.err != nil || !ok || o.Failed {
				// a test that cannot be run alone cannot be mutated; the others still can
				why := "it fails when it runs alone"
				switch {
				case res.err != nil:
					why = "it cannot run alone: " + res.err.Error()
				case !ok:
					why = "it did not run when run alone (the runner's filter left it out)"
				}
				b.Skipped = append(b.Skipped, SkippedTest{Test: k, Why: why})
				x.progress("%s is not mutated: %s", k, why)
				return
			}
			called[k] = r.called[k]
		})
		sort.Slice(b.Skipped, func(i, j int) bool { return b.Skipped[i].Test < b.Skipped[j].Test })
		b.Nameless = 0
	}
	for k, ops := range called {
		if k != "" && len(ops) > 0 {
			b.WithWorlds++
		}
	}
	return called, nil
}

// parallel calls f(0..n-1), at most Parallel at a time.
func (x *executor) parallel(n int, f func(int)) {
	sem := make(chan struct{}, x.cfg.Parallel)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}(i)
	}
	wg.Wait()
}

// mutants are the mutants of the tests' calls, in a fixed order: by test, then by
// operation in the description's order, then by code in its order, reset last.
func (x *executor) mutants(called map[string]map[string]bool) ([]Mutant, error) {
	cat := x.cfg.Catalogue
	keys := make([]string, 0, len(called))
	for k := range called {
		if k != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := []Mutant{}
	matchedTest := false
	used := make([]bool, len(x.cfg.Tests))
	var shown []string // the tests by the names --tests takes, for a suggestion
	for _, k := range keys {
		names := x.testNames(k)
		shown = append(shown, names[len(names)-1])
		selected := len(x.cfg.Tests) == 0
		for i, p := range x.cfg.Tests {
			for _, n := range names {
				if fault.PathMatch(p, n) {
					used[i], selected = true, true
					break
				}
			}
		}
		if !selected {
			continue
		}
		matchedTest = true
		for _, op := range cat.Ops {
			if !called[k][op.Method+" "+op.Path] || !glob(x.cfg.Operations, op.ID) {
				continue
			}
			for _, code := range append(append([]string(nil), op.Codes...), Reset) {
				if !glob(x.cfg.Codes, code) {
					continue
				}
				out = append(out, Mutant{Test: k, Operation: op.ID, Method: op.Method, Path: op.Path, Code: code, Status: op.Status[code]})
			}
		}
	}
	for i, p := range x.cfg.Tests {
		if used[i] || len(keys) == 0 {
			continue
		}
		if strings.Contains(p, "*") {
			return nil, fmt.Errorf("no mutants: --tests %q matches none of the baseline's tests that called an operation (%s)", p, strings.Join(firstN(shown, 5), ", "))
		}
		hint := ""
		if len(p) <= 256 {
			hint = fmt.Sprintf(" (closest: %q)", yamlcheck.Nearest(p, shown))
		}
		return nil, fmt.Errorf("no mutants: --tests %q is none of the baseline's tests that called an operation%s", p, hint)
	}
	if len(out) == 0 {
		switch {
		case len(keys) == 0:
			return nil, fmt.Errorf("no mutants: no test of the baseline called an operation through a world it made with a testkit " +
				"(mutate learns which operations a test calls from the worlds its testkit makes; see docs/mutate.md)")
		case !matchedTest:
			return nil, fmt.Errorf("no mutants: --tests %s matches none of the baseline's tests (%s)", strings.Join(x.cfg.Tests, ","), strings.Join(firstN(keys, 5), ", "))
		default:
			return nil, fmt.Errorf("no mutants: --operations and --codes leave none of the operations the tests called")
		}
	}
	return out, nil
}

// testNames are the names by which --tests picks the test of key k: the key and, for
// Go, the test's name without its package (as the report shows it when the run has one
// package, and as -run takes it), last.
func (x *executor) testNames(k string) []string {
	if x.cfg.Runner.Name() == "go" {
		if _, name, ok := strings.Cut(k, " "); ok {
			return []string{k, name}
		}
	}
	return []string{k}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), "…")
	}
	return s
}

// job is one run of the command with some mutants armed.
type job struct {
	mutants map[string]int // test key → index into run.Mutants
	alone   string         // the one test this job runs alone ("" many)
	retry   bool
}

// runMutants runs every mutant: K rounds of the suite, each test meeting its next
// mutant, or, for runners whose tests run alone, a run per mutant.
func (x *executor) runMutants(ctx context.Context, run *Run) {
	byTest := map[string][]int{}
	var order []string
	for i, m := range run.Mutants {
		if byTest[m.Test] == nil {
			order = append(order, m.Test)
		}
		byTest[m.Test] = append(byTest[m.Test], i)
	}
	var jobs []job
	if x.cfg.Runner.Alone() {
		for i, m := range run.Mutants {
			jobs = append(jobs, job{mutants: map[string]int{m.Test: i}, alone: m.Test})
		}
	} else {
		// rounds per group (the go binary runner: per package), groups in order of their
		// first test
		g, _ := x.cfg.Runner.(grouper)
		var groups []string
		members := map[string][]string{}
		for _, k := range order {
			name := ""
			if g != nil {
				name = g.Group(k)
			}
			if members[name] == nil {
				groups = append(groups, name)
			}
			members[name] = append(members[name], k)
		}
		for _, name := range groups {
			for round := 0; ; round++ {
				j := job{mutants: map[string]int{}}
				for _, k := range members[name] {
					if round < len(byTest[k]) {
						j.mutants[k] = byTest[k][round]
					}
				}
				if len(j.mutants) == 0 {
					break
				}
				jobs = append(jobs, j)
			}
		}
	}
	if len(jobs) == 0 {
		return
	}
	var mu sync.Mutex
	queue := make(chan job, len(jobs)+len(run.Mutants))
	for _, j := range jobs {
		queue <- j
	}
	pending := len(jobs)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < x.cfg.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var j job
				select {
				case j = <-queue:
				case <-done:
					return
				}
				over := ctx.Err() != nil || (x.cfg.Budget > 0 && time.Since(x.start) > x.cfg.Budget)
				var retries []job
				if over {
					mu.Lock()
					for _, i := range j.mutants {
						run.Mutants[i].Result = NotRun
						run.Mutants[i].Why = "past --budget"
						if ctx.Err() != nil {
							run.Mutants[i].Why = "interrupted"
						}
					}
					mu.Unlock()
				} else {
					retries = x.runJob(ctx, run, j, &mu)
				}
				mu.Lock()
				if !over {
					run.Runs++
				}
				pending += len(retries) - 1
				for _, r := range retries {
					queue <- r
				}
				last := pending == 0
				mu.Unlock()
				if last {
					close(done)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// runJob runs one job and records its mutants' results; it gives the retries of tests
// that did not report (a crash elsewhere in the run).
func (x *executor) runJob(ctx context.Context, run *Run, j job, mu *sync.Mutex) []job {
	r := &round{runner: x.cfg.Runner, only: j.alone, mutants: map[string]*Mutant{}}
	mu.Lock()
	only := make([]string, 0, len(j.mutants))
	for k, i := range j.mutants {
		m := run.Mutants[i]
		r.mutants[k] = &m
		only = append(only, k)
	}
	mu.Unlock()
	sort.Strings(only)
	res := x.once(ctx, r, only)
	mu.Lock()
	defer mu.Unlock()
	var retries []job
	killed := 0
	for k, i := range j.mutants {
		m := &run.Mutants[i]
		o, ok := res.outcomes[k]
		switch {
		case res.err != nil:
			m.Result, m.Why = NotRun, "the run could not be made: "+res.err.Error()
			m.Output = string(res.output)
		case !ok && res.timedOut:
			m.Result, m.Why = TimedOut, fmt.Sprintf("the run went over --timeout %s", x.cfg.Timeout)
			m.Output = string(res.output)
		case !ok && ctx.Err() != nil:
			// mutate was interrupted and killed the run: it tells nothing of the mutant
			m.Result, m.Why = NotRun, "interrupted"
		case !ok && !j.retry:
			retries = append(retries, job{mutants: map[string]int{k: i}, alone: k, retry: true})
		case !ok:
			m.Result, m.Why = Killed, "the run ended before the test reported (it crashed under the mutant)"
			killed++
		case o.Failed:
			m.Result = Killed
			killed++
		case !r.armed[k]:
			m.Result, m.Why = NotRun, "the test made no world in this run"
		case !r.called[k][m.Method+" "+m.Path]:
			m.Result, m.Why = NotRun, fmt.Sprintf("the test did not call %s in this run", m.Operation)
		default:
			m.Result = Survived
			m.Output = o.Output
			if m.Output == "" {
				m.Output = string(res.output)
			}
			m.Output = string(tail([]byte(m.Output), tailBytes))
		}
	}
	x.progress("run %d: %d mutants, %d killed, in %s", run.Runs+1, len(j.mutants), killed, res.elapsed.Round(time.Millisecond))
	return retries
}
