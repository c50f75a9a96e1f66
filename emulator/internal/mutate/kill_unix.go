//go:build unix

package mutate

import (
	"os/exec"
	"syscall"
	"time"
)

// killGroup makes cmd a process group of its own and, when its context ends, kills the
// whole group: a test runner's workers go with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}
