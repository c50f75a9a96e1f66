package mutate

import "syscall"

// deathSignal has the kernel send the run's command SIGKILL when mutate's process dies
// (a SIGKILL of hostemu mutate, a CI job cancelled): the runner does not go on alone.
// Its own children are the runner's to end (the testkits' hostemu binaries end at their
// stdin's end; Go test binaries at their -timeout).
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
