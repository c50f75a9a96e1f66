//go:build unix

package mutate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
)

// shRunner runs its command as it is: a run of mutate's without a test runner.
type shRunner struct{}

func (shRunner) Name() string                                                  { return "sh" }
func (shRunner) Key(Hello) string                                              { return "" }
func (shRunner) Alone() bool                                                   { return false }
func (shRunner) Command(argv []string, _ string, _ []string) ([]string, error) { return argv, nil }
func (shRunner) Results(string, []byte) (map[string]Outcome, error) {
	return map[string]Outcome{}, nil
}

// alive reports whether pid is a process that has not ended (a zombie has) and has
// no SIGKILL pending (it ends when next scheduled). Without /proc, it is whether pid
// is still a process at all (an orphan's zombie is soon reaped by init).
func alive(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // gone
	}
	// pid (comm) STATE …
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X') {
		return false
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, mask, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && m&(1<<(syscall.SIGKILL-1)) != 0 {
			return false
		}
	}
	return true
}

// A run that ends leaves nothing of its process group behind: a test's server or
// worker that outlived the command is killed with the group, as after --timeout.
func TestRunLeavesNoProcessBehind(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: whether a process is gone cannot be told at once")
	}
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	pidFile := filepath.Join(t.TempDir(), "pid")
	groupFile := filepath.Join(t.TempDir(), "group")
	x := &executor{cfg: Config{Argv: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; echo $$ $(cut -d' ' -f5 /proc/$$/stat) > " + groupFile}, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
	res := x.once(context.Background(), &round{runner: shRunner{}}, nil)
	if res.err != nil || res.exitErr != nil {
		t.Fatalf("run: %v %v", res.err, res.exitErr)
	}
	pid := readPid(t, pidFile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// gone, a zombie, or with SIGKILL pending by the time once returns
	if alive(pid) {
		t.Errorf("the run's background process %d outlived it", pid)
	}
	// the group's leader is the run's guard, not the command, and it is gone too
	var self, group int
	if b, err := os.ReadFile(groupFile); err != nil {
		t.Fatal(err)
	} else if _, err := fmt.Sscan(string(b), &self, &group); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	if group == self {
		t.Errorf("the command %d leads its process group; want the run's guard to", self)
	}
	if alive(group) {
		t.Errorf("the run's guard %d outlived it", group)
	}
}

// A run whose context ends (--timeout, mutate interrupted) is killed with its whole
// group, what its command started included, and its guard is gone when once returns.
func TestCancelledRunKillsItsGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: whether a process is gone cannot be told at once")
	}
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	dir := t.TempDir()
	pidFile, groupFile := filepath.Join(dir, "pid"), filepath.Join(dir, "group")
	script := "sleep 300 & echo $! > " + pidFile + ".tmp; cut -d' ' -f5 /proc/$$/stat > " + groupFile + "; mv " + pidFile + ".tmp " + pidFile + "; wait"
	x := &executor{cfg: Config{Argv: []string{"sh", "-c", script}, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res := x.once(ctx, &round{runner: shRunner{}}, nil)
	var ee *exec.ExitError
	if res.err != nil || !errors.As(res.exitErr, &ee) {
		t.Fatalf("run: %v %v; want the command's exit error", res.err, res.exitErr)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the command ended with %v; want killed", res.exitErr)
	}
	pid, group := readPid(t, pidFile), readPid(t, groupFile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if alive(pid) {
		t.Errorf("the cancelled run's background process %d outlived it", pid)
	}
	if alive(group) {
		t.Errorf("the cancelled run's guard %d outlived it", group)
	}
}

// The run's guard changes nothing of what mutate sees of its command: an exit status, a
// death by a signal, a command that cannot be started.
func TestRunEndsAsItsCommand(t *testing.T) {
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	run := func(argv ...string) result {
		x := &executor{cfg: Config{Argv: argv, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
		return x.once(context.Background(), &round{runner: shRunner{}}, nil)
	}
	var ee *exec.ExitError
	if res := run("sh", "-c", "exit 3"); res.err != nil || !errors.As(res.exitErr, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit 3: %v %v", res.err, res.exitErr)
	}
	if res := run("sh", "-c", "kill -s TERM $$"); res.err != nil || !errors.As(res.exitErr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("killed by SIGTERM: %v %v", res.err, res.exitErr)
	} else if got := res.exitErr.Error(); got != "signal: terminated" {
		t.Errorf("killed by SIGTERM: %q", got)
	}
	if res := run("./hostemu-no-such-command"); res.err == nil || !strings.HasPrefix(res.err.Error(), "running ./hostemu-no-such-command: ") {
		t.Errorf("no such command: %v %v; want it could not be run", res.err, res.exitErr)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// When hostemu mutate is killed outright (SIGKILL: no cleanup of its own runs), the
// command of the run it was making is killed too. The test runs once in a child copy of
// this test binary, which it kills.
func TestRunDiesWithMutate(t *testing.T) {
	pid := killMutateDuringRun(t, func(pidFile string) string {
		return "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 300"
	})
	if pid == 0 {
		return // the child copy
	}
	waitGone(t, pid, "the run's command")
}

// What the run's command started (npm's node, a runner's workers, a server the suite
// started) is killed too when hostemu mutate is killed outright, not only the command:
// the run's guard, which outlives mutate just long enough, kills its process group.
func TestRunGroupDiesWithMutate(t *testing.T) {
	pid := killMutateDuringRun(t, func(pidFile string) string {
		return "sleep 300 & echo $! > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && wait"
	})
	if pid == 0 {
		return
	}
	waitGone(t, pid, "what the run's command started")
}

// The run's guard is not ended by a signal the run sends its own process group: what
// the run started is still killed when mutate is.
func TestRunGroupDiesWithMutateAfterSignallingItself(t *testing.T) {
	pid := killMutateDuringRun(t, func(pidFile string) string {
		return "trap '' TERM; (exec sleep 300) & echo $! > " + pidFile + ".tmp && kill -s TERM 0 && mv " + pidFile + ".tmp " + pidFile + " && wait"
	})
	if pid == 0 {
		return
	}
	waitGone(t, pid, "what the run's command started")
}

// killMutateDuringRun runs the calling test again in a child copy of this test binary,
// which makes one run of mutate's of sh -c script(pidFile) and waits; once the script
// has written a pid to pidFile, it kills the child with SIGKILL and gives that pid. In
// the child copy it makes the run and gives 0.
func killMutateDuringRun(t *testing.T, script func(pidFile string) string) int {
	t.Helper()
	if pidFile := os.Getenv("MUTATE_DEATH_PIDFILE"); pidFile != "" {
		co, err := NewCoordinator()
		if err != nil {
			t.Fatal(err)
		}
		x := &executor{cfg: Config{Argv: []string{"sh", "-c", script(pidFile)}, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
		x.once(context.Background(), &round{runner: shRunner{}}, nil)
		return 0
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	helper.Env = append(os.Environ(), "MUTATE_DEATH_PIDFILE="+pidFile)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	var pid int
	deadline := time.Now().Add(30 * time.Second)
	for pid == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run's command never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	helper.Process.Kill()
	helper.Wait()
	return pid
}

// waitGone fails the test unless pid is gone within a generous deadline.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	began := time.Now()
	deadline := began.Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (%d) outlived the killed mutate", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s was gone %s after the killed mutate was reaped", what, time.Since(began).Round(time.Millisecond))
}

// chargeRunner is shRunner whose Results looks at the budget of outputs held while it
// reads a run's output.
type chargeRunner struct {
	shRunner
	budget  *semaphore.Weighted
	size    int64
	seen    int
	charged bool
}

func (r *chargeRunner) Results(_ string, output []byte) (map[string]Outcome, error) {
	r.seen = len(output)
	// room for all but the output: taking one byte more must fail while it is held
	if r.budget.TryAcquire(r.size - int64(len(output)) + 1) {
		r.budget.Release(r.size - int64(len(output)) + 1)
	} else {
		r.charged = true
	}
	return map[string]Outcome{}, nil
}

// A run's output is charged to the budget of outputs held at once (every parallel run
// together, 256 MiB) while mutate reads it, and given back once its report is read: 256
// runs of a chatty suite cannot hold 256 × 64 MiB.
func TestRunOutputIsChargedWhileRead(t *testing.T) {
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	const size = 8 << 20
	r := &chargeRunner{budget: semaphore.NewWeighted(size), size: size}
	x := &executor{cfg: Config{Argv: []string{"sh", "-c", "head -c 3000000 /dev/zero"}, Runner: r, Timeout: baselineTimeout}, co: co, held: r.budget}
	res := x.once(context.Background(), &round{runner: r}, nil)
	if res.err != nil || res.exitErr != nil {
		t.Fatalf("run: %v %v", res.err, res.exitErr)
	}
	if r.seen != 3000000 || !r.charged {
		t.Fatalf("read %d bytes (want 3000000), charged %v", r.seen, r.charged)
	}
	if !r.budget.TryAcquire(size) {
		t.Fatal("the output was not given back after its report was read")
	}
}

// reportRunner writes a report file of its own beside the output, as Jest, Vitest, node
// and pytest do, and looks at the budget while its Results would read it.
type reportRunner struct{ chargeRunner }

func (reportRunner) Command(_ []string, dir string, _ []string) ([]string, error) {
	return []string{"sh", "-c", "head -c 3000000 /dev/zero > " + filepath.Join(dir, "report.json") + "; printf ok"}, nil
}

func (r *reportRunner) Results(dir string, output []byte) (map[string]Outcome, error) {
	r.seen = len(output)
	// room for all but the output and the report: one byte more must fail while held
	if left := r.size - int64(len(output)) - 3000000 + 1; r.budget.TryAcquire(left) {
		r.budget.Release(left)
	} else {
		r.charged = true
	}
	return map[string]Outcome{}, nil
}

// A runner's report file is charged to the same budget as the run's output while it is
// read (it was read outside it: 256 MiB × --parallel at worst), and given back after.
func TestRunReportIsChargedWhileRead(t *testing.T) {
	co, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	const size = 8 << 20
	r := &reportRunner{chargeRunner{budget: semaphore.NewWeighted(size), size: size}}
	x := &executor{cfg: Config{Runner: r, Timeout: baselineTimeout}, co: co, held: r.budget, heldSize: size}
	res := x.once(context.Background(), &round{runner: r}, nil)
	if res.err != nil || res.exitErr != nil {
		t.Fatalf("run: %v %v", res.err, res.exitErr)
	}
	if r.seen != 2 || !r.charged {
		t.Fatalf("read %d bytes of output (want 2), report charged %v", r.seen, r.charged)
	}
	if !r.budget.TryAcquire(size) {
		t.Fatal("the report was not given back after it was read")
	}
}
