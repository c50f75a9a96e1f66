//go:build !unix

package mutate

import (
	"os/exec"
	"time"
)

// killGroup: elsewhere, the command alone is killed when its context ends, and there is
// no group to end after it.
func killGroup(cmd *exec.Cmd) (end func(), err error) {
	cmd.WaitDelay = 5 * time.Second
	return func() {}, nil
}

// killGroupWith is killGroup: elsewhere there is no guard to run.
func killGroupWith(_ string, cmd *exec.Cmd) (end func(), err error) { return killGroup(cmd) }

// guardShell: elsewhere a run has no guard, and needs no shell.
const guardShell = ""

// guardMissing: elsewhere nothing is missing.
func guardMissing(string) error { return nil }
