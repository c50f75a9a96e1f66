//go:build unix

package mutate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// guardScript is a run's guard: it reads its standard input, a pipe whose other end
// only mutate holds, until it ends, then kills its process group, itself included.
// mutate never writes to it: the kernel ends it when mutate dies, SIGKILL included. It
// ignores the signals a run may send its own group (kill(0, SIGTERM), a runner ending
// its workers): the guard ends with its pipe, or by mutate's SIGKILL, only.
//
// It says on its standard output that its trap is set (one line), and mutate starts the
// run's command only then: a signal the command sends its group before the trap is set
// would end the guard, and nothing would kill what the command started.
const guardScript = "trap '' HUP INT QUIT TERM; echo; while read x; do :; done; kill -s KILL 0"

// guardShell runs guardScript: the one thing outside itself mutate needs to run a
// command (every Unix where npm, pytest or go test run has it; a distroless image does
// not).
const guardShell = "/bin/sh"

// guardMissing is why no run can be guarded with shell (guardShell): it is missing or
// not executable. Execute asks it before the baseline, so that a machine without a
// shell is told so once, rather than have its suite's baseline "fail".
func guardMissing(shell string) error {
	if _, err := exec.LookPath(shell); err != nil {
		return fmt.Errorf("each run needs %s: a small sh script leads the run's process group and kills what the run leaves running should mutate die, and mutate never runs a command unguarded; %s cannot be run here (%v): run mutate where there is a shell", shell, shell, unwrapPath(err))
	}
	return nil
}

// unwrapPath is err without the path, which the message names already: the
// *fs.PathError's (a missing shell), else the *exec.Error's (a shell that is not
// executable: exec: "/bin/sh": permission denied).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// killGroup puts cmd in a process group of its own and gives the function that ends it,
// to call once cmd has ended: what the run left running (a test's server, a runner's
// worker) is killed with the group. When cmd's context ends, the whole group is killed
// (a test runner's workers go with it).
//
// The group's leader is a guard (guardScript), a small sh started first, beside cmd (not
// its parent: cmd stays mutate's child, so its exit status, its path look-up and a
// failure to start it are what they were). When mutate dies however it dies, a SIGKILL
// included, the guard outlives it just long enough to kill the group: cmd and all it
// started. Linux's parent-death signal alone reaches cmd only (Go issue 27505); where
// there is one (deathSignal), cmd gets it too, which also covers cmd's first instant,
// before it has joined the group.
//
// The group's id is the guard's pid, which stays taken until mutate reaps the guard, in
// the end function, after the kill: it cannot name another process's group.
func killGroup(cmd *exec.Cmd) (end func(), err error) { return killGroupWith(guardShell, cmd) }

// killGroupWith is killGroup with the guard run by shell.
func killGroupWith(shell string, cmd *exec.Cmd) (end func(), err error) {
	r, w, err := os.Pipe() // close-on-exec: cmd and other runs do not inherit w
	if err != nil {
		return nil, err
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	guard := exec.Command(shell, "-c", guardScript)
	guard.Stdin, guard.Stdout = r, readyW
	guard.Env = []string{} // read and kill are sh's own; no startup file to read
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = guard.Start()
	r.Close()
	readyW.Close()
	if err != nil {
		ready.Close()
		w.Close()
		if missing := guardMissing(shell); missing != nil {
			return nil, fmt.Errorf("starting the run's guard: %w", missing)
		}
		return nil, fmt.Errorf("starting the run's guard: %w", err)
	}
	pgid := guard.Process.Pid
	// its trap set (its line), or it died before it (EOF)
	var line [1]byte
	_, err = ready.Read(line[:])
	ready.Close()
	if err != nil {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		w.Close()
		_ = guard.Wait()
		return nil, fmt.Errorf("starting the run's guard: it ended before it was ready: %w", err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	deathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-pgid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		w.Close()
		_ = guard.Wait()
	}, nil
}
