//go:build unix && !linux

package mutate

import "syscall"

// deathSignal: only Linux has a parent-death signal; elsewhere a killed mutate leaves
// its run to its --timeout-less end.
func deathSignal(*syscall.SysProcAttr) {}
