//go:build !linux

package perf_test

import "os/exec"

// dieWithTest: only Linux has a parent-death signal (the binary comparisons need Linux).
func dieWithTest(p *exec.Cmd) *exec.Cmd { return p }
