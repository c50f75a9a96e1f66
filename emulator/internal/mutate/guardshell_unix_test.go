//go:build unix

package mutate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without the shell the guard needs, a run is refused with a message naming the shell
// and why mutate needs it (Execute asks before the baseline, and never runs the
// command unguarded); before, it was "fork/exec /bin/sh: no such file or
// directory" under "the baseline failed", which blamed the suite.
func TestGuardWithoutAShellNamesIt(t *testing.T) {
	t.Parallel()
	if err := guardMissing(guardShell); err != nil {
		t.Fatalf("this machine's %s: %v", guardShell, err)
	}
	dir := t.TempDir()
	notExec := filepath.Join(dir, "sh")
	if err := os.WriteFile(notExec, []byte("#!/nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for shell, why := range map[string]string{filepath.Join(dir, "missing", "sh"): "no such file or directory", notExec: "permission denied"} {
		want := func(what string, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s with %s: no error", what, shell)
			}
			// the path once, as what cannot be run, and why in the words of the system
			if msg := err.Error(); !strings.Contains(msg, "needs "+shell) || !strings.Contains(msg, shell+" cannot be run here ("+why+")") || strings.Contains(msg, "baseline") {
				t.Errorf("%s with %s: %q, want the shell named as what mutate needs", what, shell, msg)
			}
		}
		want("guardMissing", guardMissing(shell))
		end, err := killGroupWith(shell, exec.Command("true"))
		if err == nil {
			end()
		}
		want("killGroupWith", err)
	}
}
