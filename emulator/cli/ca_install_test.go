package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/truststore"
)

// hostemu ca install trusts the CA in the system store (here a temporary directory and
// command in place of the machine's) and in a fresh home's NSS database, which it
// creates; uninstall takes both back. Not parallel: it swaps trustSystem.
func TestCAInstall(t *testing.T) {
	cu, err := exec.LookPath("certutil")
	if err != nil {
		t.Skip("certutil not installed (Debian: apt install libnss3-tools)")
	}
	home, anchors := t.TempDir(), t.TempDir()
	rebuilt := filepath.Join(anchors, "rebuilt")
	sys := &truststore.System{Dir: anchors, Ext: ".crt", Command: []string{"touch", rebuilt}}
	old := trustSystem
	trustSystem = func() *truststore.System { return sys }
	t.Cleanup(func() { trustSystem = old })

	vars := map[string]string{"HOME": home} // the CA in ~/.config/hostemu/ca, the database in ~/.pki/nssdb
	code, stdout, stderr := runCmd(t, vars, "ca", "install")
	if code != 0 {
		t.Fatalf("ca install: exit %d\n%s%s", code, stdout, stderr)
	}
	_, pem, _ := runCmd(t, vars, "ca")
	anchor, _ := filepath.Glob(filepath.Join(anchors, "hostemu_CA_*.crt"))
	if len(anchor) != 1 {
		t.Fatalf("anchors %v", anchor)
	}
	if b, _ := os.ReadFile(anchor[0]); string(b) != pem {
		t.Errorf("the system anchor is not the CA hostemu ca prints")
	}
	if _, err := os.Stat(rebuilt); err != nil {
		t.Errorf("the system store's command did not run: %v", err)
	}
	nssdb := "sql:" + filepath.Join(home, ".pki", "nssdb")
	out, err := exec.Command(cu, "-L", "-d", nssdb).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "hostemu CA ") || !strings.Contains(string(out), "C,,") {
		t.Errorf("certutil -L -d %s: %v\n%s", nssdb, err, out)
	}

	if code, stdout, stderr := runCmd(t, vars, "ca", "uninstall"); code != 0 {
		t.Fatalf("ca uninstall: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(anchor[0]); err == nil {
		t.Error("the system anchor is still there")
	}
	if out, _ := exec.Command(cu, "-L", "-d", nssdb).CombinedOutput(); strings.Contains(string(out), "hostemu CA ") {
		t.Errorf("the NSS database still holds the CA:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ca", "install", "extra"}, 2, "unexpected argument"},
		{[]string{"ca", "install", "--nope"}, 2, "unknown flag"},
		{[]string{"ca", "install", "--ca-dir", caInMemory}, 2, "/_emulator/ca.pem"},
	} {
		if code, _, stderr := runCmd(t, vars, tc.args...); code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}
