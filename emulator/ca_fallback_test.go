package emulator

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A CADir that cannot hold a CA stops the start, naming it; with CADirFallback (the
// command line's default directory) a new CA in memory serves instead, said once in
// the log. A usable directory is read as it is, fallback or not: the same CA twice.
func TestCADirFallback(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "ca.pem"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "ca-key.pem"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, broken} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, err := New(Options{CADir: dir})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), dir) {
				t.Errorf("without the fallback: %v, want a ConfigError naming %s", err, dir)
			}

			var logged bytes.Buffer
			e, err := New(Options{CADir: dir, CADirFallback: true, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatalf("with the fallback: %v", err)
			}
			defer e.Close()
			if n := strings.Count(logged.String(), "the local CA is kept in memory"); n != 1 {
				t.Errorf("the warning, %d times in the log:\n%s", n, logged.String())
			}
			if !bytes.Contains(e.CACertPEM(), []byte("BEGIN CERTIFICATE")) {
				t.Errorf("no CA served: %q", e.CACertPEM())
			}
		})
	}

	dir := filepath.Join(t.TempDir(), "ca")
	var pems [][]byte
	for _, fallback := range []bool{false, true} {
		var logged bytes.Buffer
		e, err := New(Options{CADir: dir, CADirFallback: fallback, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		pems = append(pems, e.CACertPEM())
		e.Close()
		if logged.Len() != 0 {
			t.Errorf("fallback %v: logged %s", fallback, logged.String())
		}
	}
	if !bytes.Equal(pems[0], pems[1]) {
		t.Error("the directory's CA was not the one served the second time")
	}
}
