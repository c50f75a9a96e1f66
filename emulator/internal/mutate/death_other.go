//go:build unix && !linux

package mutate

import "syscall"

// deathSignal: only Linux has a parent-death signal; elsewhere the run's guard alone
// kills the run's process group when mutate dies (killGroup).
func deathSignal(*syscall.SysProcAttr) {}
