//go:build unix

package mutate

import (
	"context"
	"errors"
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

// Execute asks for its shell (Config.Shell) before the baseline: without one it can
// run, the run is refused with the shell named, not as a failed baseline, and the
// suite's command never runs. The shell was a constant, so this path was never run.
func TestExecuteWithoutItsShellRunsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "sh")
	if err := os.WriteFile(notExec, []byte("#!/nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, shell, why string }{
		{"missing", filepath.Join(dir, "missing", "sh"), "no such file or directory"},
		{"not executable", notExec, "permission denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			run, err := Execute(context.Background(), Config{Argv: []string{"sh", "-c", "echo > " + marker}, Runner: shRunner{}, Catalogue: cat, Shell: tt.shell})
			if err == nil {
				t.Fatal("Execute ran")
			}
			if msg := err.Error(); errors.Is(err, ErrBaseline) || !strings.Contains(msg, "needs "+tt.shell) || !strings.Contains(msg, tt.shell+" cannot be run here ("+tt.why+")") {
				t.Errorf("%q, want the shell named, not the baseline", msg)
			}
			if run != nil {
				t.Errorf("a run was reported: %+v", run.Baseline)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the suite's command ran (%v)", err)
			}
		})
	}
}
