//go:build !unix

package mutate

import (
	"os/exec"
	"time"
)

// killGroup: elsewhere, the command alone is killed when its context ends.
func killGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// endGroup: elsewhere there is no group to end.
func endGroup(*exec.Cmd) {}
