package perf_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill p when the test process dies (a -timeout's panic, a
// SIGKILL), when its cleanups do not run: a server pinned to a core, or holding a world
// of 100,000 deployments, must not go on alone. As mutate's deathSignal.
func dieWithTest(p *exec.Cmd) *exec.Cmd {
	p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return p
}
