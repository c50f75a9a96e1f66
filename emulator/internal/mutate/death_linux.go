package mutate

import "syscall"

// deathSignal has the kernel send the run's command SIGKILL when mutate's process dies
// (a SIGKILL of hostemu mutate, a CI job cancelled), from the instant the command
// starts. It reaches the command alone; the run's guard kills the rest of its process
// group (killGroup).
func deathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
