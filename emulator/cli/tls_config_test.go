package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without --ca-dir, serve keeps its CA in the user's config directory, so a CA trusted
// once (hostemu ca install) is the one the next start serves; hostemu ca finds the same
// one. A default that cannot be used falls back to a CA in memory, with a warning.
func TestCAPersistsInTheUserConfigDir(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	vars := map[string]string{"HOSTEMU_ADDR": "127.0.0.1:0", "HOSTEMU_CA_DIR": "", "XDG_CONFIG_HOME": cfg} // "" counts as unset: the default
	served := func() string {
		s := startServe(t, vars)
		res, err := http.Get(s.url + "/_emulator/ca.pem")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		s.stop(t)
		return string(b)
	}
	first := served()
	dir := filepath.Join(cfg, "hostemu", "ca")
	if fi, err := os.Stat(filepath.Join(dir, "ca-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key in the user config dir: %v %v", fi, err)
	}
	if again := served(); again != first {
		t.Error("a second start serves another CA")
	}
	if code, printed, stderr := runCmd(t, map[string]string{"XDG_CONFIG_HOME": cfg}, "ca"); code != 0 || printed != first {
		t.Errorf("hostemu ca with the default directory: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, map[string]string{"HOME": cfg}, "ca", "--ca-dir", caInMemory); code != 2 || !strings.Contains(stderr, "/_emulator/ca.pem") {
		t.Errorf("hostemu ca --ca-dir :memory:: exit %d, %s", code, stderr)
	}

	// no home at all, or one that cannot be written: a CA in memory, said so
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	for _, vars := range []map[string]string{{"HOSTEMU_ADDR": "127.0.0.1:0", "HOSTEMU_CA_DIR": ""}, {"HOSTEMU_ADDR": "127.0.0.1:0", "HOSTEMU_CA_DIR": "", "XDG_CONFIG_HOME": ro}} {
		s := startServe(t, vars)
		if os.Geteuid() != 0 || vars["XDG_CONFIG_HOME"] == "" { // root writes anywhere
			if !strings.Contains(s.stderr.String(), "kept in memory") {
				t.Errorf("%v: no warning about the CA in memory:\n%s", vars, s.stderr)
			}
		}
	}
	// a --ca-dir the user gave that cannot be used stops the start
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if code, _, stderr := runCmd(t, nil, "serve", "--addr", "127.0.0.1:0", "--ca-dir", file); code != 2 || !strings.Contains(stderr, file) {
		t.Errorf("--ca-dir on a file: exit %d, %s", code, stderr)
	}
}

// A key in the default CA directory that others can read is made private at the start,
// and the log says so once (docs/security.md). The command line used to load the
// default directory to test it and the emulator to load it again: the first load made
// the key 0600 and its warning was dropped, so the second found nothing to say.
func TestDefaultCADirOpenKeyIsSaid(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	if code, _, stderr := runCmd(t, map[string]string{"XDG_CONFIG_HOME": cfg}, "ca"); code != 0 {
		t.Fatalf("hostemu ca: exit %d, %s", code, stderr)
	}
	key := filepath.Join(cfg, "hostemu", "ca", "ca-key.pem")
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, map[string]string{"HOSTEMU_ADDR": "127.0.0.1:0", "HOSTEMU_CA_DIR": "", "XDG_CONFIG_HOME": cfg})
	if n := strings.Count(s.stderr.String(), "was readable by others"); n != 1 {
		t.Errorf("the warning about the open key, %d times:\n%s", n, s.stderr)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key after the start: %v %v", fi, err)
	}
}
