package python_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// The pytest side of hostemu mutate (docs/mutate.md), on the installed wheel: TestWheels
// calls these with its virtual environment. python/tests/mutate is a sample client
// whose project_count swallows every error and whose deploy lets them through.

const (
	projectCountID = "mutate/test_client.py::test_project_count"
	deployID       = "mutate/test_client.py::TestDeploy::test_deploy[prj_demo]"
	startedID      = "mutate/test_client.py::test_started_world"
)

// standInCoordinator is the coordinator's half of the protocol, strict as mutate's own:
// it records each hello and each world's reported operations, and hands the fault
// faults names to the worlds of that test.
type standInCoordinator struct {
	mu      sync.Mutex
	hellos  []string            // the hellos' tests ("" for a nameless one)
	called  map[string][]string // world → "METHOD /path" seen
	faults  map[string]any      // test → fault
	refuse  bool                // answer every hello 404 not_found
	bad     []string            // what was not the protocol
	helloed map[string]string   // world → test
}

func (c *standInCoordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	switch {
	case r.Method == "POST" && r.URL.Path == "/r/round1/world":
		if c.refuse {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"code":"not_found","message":"no such mutation round (it is over)"}}`)
			return
		}
		var h struct{ Test, Package, File string }
		if err := dec.Decode(&h); err != nil {
			c.bad = append(c.bad, "hello: "+err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id := fmt.Sprintf("w%d", len(c.hellos)+1)
		c.hellos = append(c.hellos, h.Test)
		c.helloed[id] = h.Test
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"world": id, "fault": c.faults[h.Test], "report": true})
	case r.Method == "POST" && r.URL.Path == "/r/round1/coverage":
		var rep struct {
			World    string
			Coverage struct {
				Operations []struct {
					Method, Path string
					Seen         int64
				}
			}
		}
		// the coverage holds more than operations: read it loosely, the envelope strictly
		var env map[string]json.RawMessage
		if err := dec.Decode(&env); err != nil || len(env) != 2 || env["world"] == nil || env["coverage"] == nil {
			c.bad = append(c.bad, fmt.Sprintf("coverage: %v %v", err, env))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		json.Unmarshal(env["world"], &rep.World)
		json.Unmarshal(env["coverage"], &rep.Coverage)
		if _, ok := c.helloed[rep.World]; !ok {
			c.bad = append(c.bad, "coverage of an unknown world "+rep.World)
		}
		for _, op := range rep.Coverage.Operations {
			if op.Seen > 0 {
				c.called[rep.World] = append(c.called[rep.World], op.Method+" "+op.Path)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		c.bad = append(c.bad, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
	}
}

// calledBy is each test's operations, as the worlds reported them.
func (c *standInCoordinator) calledBy() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for w, ops := range c.called {
		sort.Strings(ops)
		out[c.helloed[w]] = strings.Join(ops, ",")
	}
	return out
}

// mutantProtocol runs the sample under a stand-in coordinator: the worlds say hello
// with their node ids (the session's own hostemu, a shared world and a test without a
// world say nothing), the fault is armed before the test gets its world, the coverage
// is posted at each world's end; a coordinator that refuses fails the tests that make
// worlds.
func mutantProtocol(t *testing.T, work string, env []string, vpy string, xdist bool) {
	co := &standInCoordinator{called: map[string][]string{}, helloed: map[string]string{}, faults: map[string]any{
		deployID: map[string]any{"match": map[string]any{"operation": "createDeployment"}, "error": "service_unavailable", "times": 1},
	}}
	srv := httptest.NewServer(co)
	t.Cleanup(srv.Close)
	menv := append(slices.Clip(env), "HOSTEMU_MUTANT="+srv.URL+"/r/round1")
	args := []string{"-m", "pytest", "-p", "no:cacheprovider", "-rf", "mutate"}
	if xdist {
		args = append(args, "-n", "2")
	}
	r := runIn(t, work, menv, vpy, args...)
	if r.code != 1 || !strings.Contains(r.out, "1 failed, 4 passed") || !strings.Contains(r.out, "503") {
		t.Fatalf("pytest under a mutant of createDeployment: exit %d, want 1 with the deploy test failed on its 503:\n%s", r.code, r.out)
	}
	co.mu.Lock()
	hellos := slices.Sorted(slices.Values(co.hellos))
	bad := co.bad
	co.mu.Unlock()
	if want := []string{deployID, projectCountID, startedID}; !slices.Equal(hellos, want) {
		t.Errorf("hellos %q, want %q (one per world, by node id; none for the session's hostemu)", hellos, want)
	}
	if got, want := co.calledBy(), map[string]string{projectCountID: "GET /v1/projects", deployID: "POST /v1/deployments", startedID: "POST /v1/deployments"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the worlds reported %v, want %v", got, want)
	}
	if len(bad) > 0 {
		t.Errorf("not the protocol: %q", bad)
	}
	if strings.Contains(r.out, "hostemu failure bundle") {
		t.Errorf("a mutant's failure left a bundle:\n%s", r.out)
	}

	// a module-scoped fixture's world names no test; the test's own fixture names it
	co.mu.Lock()
	co.hellos = nil
	co.mu.Unlock()
	if r := runIn(t, work, menv, vpy, "-m", "pytest", "-p", "no:cacheprovider", "mutate_scopes"); r.code != 0 {
		t.Fatalf("pytest mutate_scopes: exit %d\n%s", r.code, r.out)
	}
	co.mu.Lock()
	hellos = slices.Sorted(slices.Values(co.hellos))
	co.mu.Unlock()
	if want := []string{"", "mutate_scopes/test_scopes.py::test_first"}; !slices.Equal(hellos, want) {
		t.Errorf("hellos %q, want %q (the module's world names no test)", hellos, want)
	}

	co.mu.Lock()
	co.refuse = true
	co.mu.Unlock()
	r = runIn(t, work, menv, vpy, args...)
	if r.code != 1 || !strings.Contains(r.out, "1 failed, 2 passed, 2 errors") || !strings.Contains(r.out, "MutantError: hostemu mutate: the coordinator answered 404") {
		t.Errorf("a coordinator that refuses: exit %d, want 1 with the three world tests failed or in error on a MutantError:\n%s", r.code, r.out)
	}

	co.mu.Lock()
	co.refuse = false
	co.faults = map[string]any{projectCountID: map[string]any{"match": map[string]any{"operation": "listProjects"}, "error": "no_such_code"}}
	co.mu.Unlock()
	r = runIn(t, work, menv, vpy, args...)
	if r.code != 1 || !strings.Contains(r.out, "4 passed, 1 error") || !strings.Contains(r.out, "could not be armed in this world") {
		t.Errorf("a fault that cannot be armed: exit %d, want 1 with the test in error (a mutant never injected must not survive):\n%s", r.code, r.out)
	}
}

// mutateReport is what the pytest test reads of `hostemu mutate --format json`.
type mutateReport struct {
	Score   float64 `json:"score"`
	Mutants []struct {
		Test, Operation, Code, Result, Output, Why string
	} `json:"mutants"`
	Baseline struct {
		Runner     string `json:"runner"`
		Passed     bool   `json:"passed"`
		Tests      int    `json:"tests"`
		WithWorlds int    `json:"with_worlds"`
	} `json:"baseline"`
}

// runSplit runs a command in dir and gives its exit code, standard output and error.
func runSplit(t *testing.T, dir string, env []string, name string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	// each step in the log, for the reader of a failure
	defer func() {
		t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
	}()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit) && ctx.Err() == nil:
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	return 0, "", ""
}

// mutatePytest runs `hostemu mutate -- python -m pytest mutate` on the sample: every
// mutant of the swallowing project_count survives, every one of deploy is killed; two
// runs (and a run under pytest -n 2) give the same report; --min, a failing baseline
// and --budget answer as documented.
func mutatePytest(t *testing.T, work string, env []string, vpy, hostemu string, xdist bool) {
	pytest := []string{vpy, "-m", "pytest", "mutate"}
	codes := "service_unavailable,invalid_token,reset"
	runEnv := env
	mutate := func(extra []string, flags ...string) (int, string, string) {
		return runSplit(t, work, runEnv, hostemu, append(append(append([]string{"mutate"}, flags...), "--"), append(slices.Clip(pytest), extra...)...)...)
	}
	report := func(extra []string) mutateReport {
		code, out, errOut := mutate(extra, "--format", "json", "--quiet", "--parallel", "2", "--codes", codes)
		if code != 0 {
			t.Fatalf("hostemu mutate -- %s: exit %d\n%s\n%s", strings.Join(append(slices.Clip(pytest), extra...), " "), code, out, errOut)
		}
		var r mutateReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("the JSON report: %v\n%s", err, out)
		}
		return r
	}
	key := func(r mutateReport) []string {
		var out []string
		for _, m := range r.Mutants {
			out = append(out, m.Test+" "+m.Operation+" "+m.Code+" "+m.Result)
		}
		return out
	}

	r := report(nil)
	if r.Baseline.Runner != "pytest" || !r.Baseline.Passed || r.Baseline.Tests != 5 || r.Baseline.WithWorlds != 3 {
		t.Errorf("baseline = %+v, want pytest, passed, 5 tests of which 3 with worlds (none for the shared one)", r.Baseline)
	}
	want := map[string]string{}
	for _, c := range strings.Split(codes, ",") {
		want[projectCountID+" listProjects "+c] = "survived"
		want[deployID+" createDeployment "+c] = "killed"
		want[startedID+" createDeployment "+c] = "killed"
	}
	got := map[string]string{}
	for _, m := range r.Mutants {
		got[m.Test+" "+m.Operation+" "+m.Code] = m.Result
		if m.Result == "survived" && m.Output == "" {
			t.Errorf("a survivor without its output's tail: %+v", m)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mutants:\n%v\nwant\n%v", got, want)
	}
	if r.Score < 0.666 || r.Score > 0.667 {
		t.Errorf("score %v, want 6/9", r.Score)
	}
	if again := report(nil); !slices.Equal(key(again), key(r)) {
		t.Errorf("a second run's report differs:\n%q\nthe first's:\n%q", key(again), key(r))
	}
	if xdist {
		if par := report([]string{"-n", "2"}); !slices.Equal(key(par), key(r)) {
			t.Errorf("under pytest -n 2 the report differs:\n%q\nwithout:\n%q", key(par), key(r))
		}
	}
	// every run's worlds as namespaces of one hostemu (HOSTEMU_URL), two runs at a time:
	// the mutants do not touch each other's worlds
	runEnv = append(slices.Clip(env), "HOSTEMU_URL="+testkit.Start(t).URL())
	if one := report(nil); !slices.Equal(key(one), key(r)) {
		t.Errorf("on one hostemu (HOSTEMU_URL) the report differs:\n%q\nwith a hostemu per run:\n%q", key(one), key(r))
	}
	runEnv = env

	// --min: the score is 2/3; 66 % passes, 67 % is exit 1 with the report still written
	code, out, errOut := mutate(nil, "--min", "67", "--format", "markdown", "--codes", "service_unavailable")
	if code != 1 || !strings.Contains(errOut, "under --min 67%") || !strings.Contains(out, projectCountID) {
		t.Errorf("--min 67: exit %d, want 1 and the survivor in the report\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := mutate(nil, "--min", "66", "--quiet", "--codes", "service_unavailable"); code != 0 {
		t.Errorf("--min 66: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	// a failing baseline: 2, with the end of pytest's output
	code, out, errOut = runSplit(t, work, append(slices.Clip(env), "MUTATE_SAMPLE_FAIL=1"), hostemu, append([]string{"mutate", "--"}, pytest...)...)
	if code != 2 || out != "" || !strings.Contains(errOut, "the baseline failed") || !strings.Contains(errOut, "MUTATE_SAMPLE_FAIL is set") {
		t.Errorf("a failing baseline: exit %d, want 2 and its output's tail\nstdout %s\nstderr %s", code, out, errOut)
	}
	// --timeout: the hanging test's mutant timed out; the one that finished in the same
	// run, before pytest could write its report, survived (the plugin's lines say so)
	code, out, errOut = runSplit(t, work, env, hostemu, "mutate", "--format", "json", "--quiet", "--timeout", "15s", "--codes", "service_unavailable", "--", vpy, "-m", "pytest", "mutate_hang")
	var h mutateReport
	if err := json.Unmarshal([]byte(out), &h); code != 0 || err != nil {
		t.Fatalf("--timeout 15s: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if got := fmt.Sprint(key(h)); got != "[mutate_hang/test_hang.py::test_hangs_on_error listProjects service_unavailable timed_out mutate_hang/test_hang.py::test_retries listProjects service_unavailable survived]" {
		t.Errorf("--timeout 15s: %s, want test_hangs_on_error timed_out and test_retries survived", got)
	}
	// --budget: what is past it is not_run
	code, out, errOut = mutate(nil, "--format", "json", "--quiet", "--budget", "1ns", "--codes", "reset")
	var b mutateReport
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil || len(b.Mutants) != 3 {
		t.Fatalf("--budget 1ns: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	for _, m := range b.Mutants {
		if m.Result != "not_run" {
			t.Errorf("--budget 1ns: %+v, want not_run", m)
		}
	}
}
