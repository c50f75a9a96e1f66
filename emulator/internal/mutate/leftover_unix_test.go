//go:build unix

package mutate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
// no SIGKILL pending (it ends when next scheduled).
func alive(pid int) bool {
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
	x := &executor{cfg: Config{Argv: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile}, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
	res := x.once(context.Background(), &round{runner: shRunner{}}, nil)
	if res.err != nil || res.exitErr != nil {
		t.Fatalf("run: %v %v", res.err, res.exitErr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// gone, a zombie, or with SIGKILL pending by the time once returns
	if alive(pid) {
		t.Errorf("the run's background process %d outlived it", pid)
	}
}

// When hostemu mutate is killed outright (SIGKILL: no cleanup of its own runs), the
// command of the run it was making is killed too. The test runs once in a child copy of
// this test binary, which it kills.
func TestRunDiesWithMutate(t *testing.T) {
	if pidFile := os.Getenv("MUTATE_DEATH_PIDFILE"); pidFile != "" {
		co, err := NewCoordinator()
		if err != nil {
			t.Fatal(err)
		}
		x := &executor{cfg: Config{Argv: []string{"sh", "-c", "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 300"}, Runner: shRunner{}, Timeout: baselineTimeout}, co: co}
		x.once(context.Background(), &round{runner: shRunner{}}, nil)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestRunDiesWithMutate$")
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
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's command %d outlived the killed mutate", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
