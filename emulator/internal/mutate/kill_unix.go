//go:build unix

package mutate

import (
	"os/exec"
	"syscall"
	"time"
)

// killGroup makes cmd a process group of its own and, when its context ends, kills the
// whole group: a test runner's workers go with it. Where the system can (Linux), the
// command is also killed when mutate itself dies, however it dies (deathSignal).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	deathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// endGroup kills what is left of cmd's process group once cmd has ended: a server or a
// worker of the run's that outlived it (a run must leave nothing running).
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
