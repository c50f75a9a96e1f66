package mutate

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// helloThenHang, as the test binary's own process (HOSTEMU_MUTATE_HELPER=hang), says
// hello to its round's coordinator and waits to be killed: a test that is running when
// mutate is interrupted.
func init() {
	if os.Getenv("HOSTEMU_MUTATE_HELPER") != "hang" {
		return
	}
	resp, err := http.Post(os.Getenv(Env)+"/world", "application/json", strings.NewReader(`{"test":"T"}`))
	if err == nil {
		resp.Body.Close()
	}
	time.Sleep(time.Hour) // until killed (select{} alone could be reported a deadlock)
}

// helloRunner runs its command as it is and calls hello at each world's hello.
type helloRunner struct{ hello func() }

func (helloRunner) Name() string { return "hello" }
func (r helloRunner) Key(h Hello) string {
	r.hello()
	return h.Test
}
func (helloRunner) Alone() bool                                                   { return false }
func (helloRunner) Command(argv []string, _ string, _ []string) ([]string, error) { return argv, nil }
func (helloRunner) Results(string, []byte) (map[string]Outcome, error) {
	return map[string]Outcome{}, nil
}

// A run killed because mutate was interrupted (SIGINT, SIGTERM) tells nothing of its
// mutants: they are not_run "interrupted", never killed as if they had crashed, and
// the run says it was interrupted (the command exits 2: a gate must not pass on part
// of a run).
func TestInterruptedRunKillsNoMutant(t *testing.T) {
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	run := &Run{Mutants: []Mutant{{Test: "T", Operation: "listProjects", Method: "GET", Path: "/v1/projects", Code: "reset"}}}
	var mu sync.Mutex
	for _, retry := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		r := helloRunner{hello: func() { once.Do(cancel) }}
		env := append(os.Environ(), "HOSTEMU_MUTATE_HELPER=hang")
		x := &executor{cfg: Config{Argv: []string{os.Args[0]}, Env: env, Runner: r, Timeout: baselineTimeout, Parallel: 1}, co: co}
		run.Mutants[0].Result, run.Mutants[0].Why = "", ""
		retries := x.runJob(ctx, run, job{mutants: map[string]int{"T": 0}, alone: "T", retry: retry}, &mu)
		if m := run.Mutants[0]; len(retries) != 0 || m.Result != NotRun || m.Why != "interrupted" {
			t.Errorf("retry %v: %d retries, %s %q; want not_run interrupted", retry, len(retries), m.Result, m.Why)
		}
		cancel()
	}
}
