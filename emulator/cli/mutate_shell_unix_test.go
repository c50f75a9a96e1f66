//go:build unix

package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostemu mutate without the shell its runs need exits 2 naming the shell, before the
// baseline: the suite's command never runs, and nothing blames it.
func TestMutateWithoutItsShellExits2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "sh")
	if err := os.WriteFile(notExec, []byte("#!/nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, shell, why string }{
		{"missing", filepath.Join(dir, "missing", "sh"), "no such file or directory"},
		{"not executable", notExec, "permission denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			cfg, opt, err := parseMutate([]string{"--runner", "go", "--", "sh", "-c", "echo > " + marker})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Shell = tt.shell
			var stdout, stderr bytes.Buffer
			if code := runMutate(context.Background(), cfg, opt, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			msg := stderr.String()
			if !strings.HasPrefix(msg, "hostemu mutate: each run needs "+tt.shell) || !strings.Contains(msg, tt.shell+" cannot be run here ("+tt.why+")") || strings.Contains(msg, "baseline") {
				t.Errorf("stderr %q, want the shell named, and no baseline", msg)
			}
			if stdout.Len() > 0 {
				t.Errorf("a report was written: %q", stdout.String())
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the suite's command ran (%v)", err)
			}
		})
	}
}
