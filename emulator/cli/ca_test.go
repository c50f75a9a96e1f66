package cli

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hostemu ca prints the CA of --ca-dir (or HOSTEMU_CA_DIR), creating it once; serve
// with the same directory serves certificates from that CA on --tls-addr.
func TestCACommand(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ca")
	code, first, stderr := runCmd(t, nil, "ca", "--ca-dir", dir)
	if code != 0 || !strings.HasPrefix(first, "-----BEGIN CERTIFICATE-----\n") {
		t.Fatalf("ca: exit %d, %q, %s", code, first, stderr)
	}
	if _, again, _ := runCmd(t, map[string]string{"HOSTEMU_CA_DIR": dir}, "ca"); again != first {
		t.Error("a second run with HOSTEMU_CA_DIR prints another CA")
	}
	if fi, err := os.Stat(filepath.Join(dir, "ca-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi, err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"ca"}, 2, "give --ca-dir"},
		{[]string{"ca", "--ca"}, 2, "unknown flag"},
		{[]string{"ca", "--nope"}, 2, "unknown flag -nope (see hostemu ca -h)"},
		{[]string{"ca", "--ca-dir", dir, "extra"}, 2, "unexpected argument"},
		{[]string{"ca", "--ca-dir", filepath.Join(dir, "ca.pem")}, 1, "hostemu ca:"}, // a file, not a directory
	} {
		if code, _, stderr := runCmd(t, nil, tc.args...); code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}

	s := startServe(t, nil, "--addr", "127.0.0.1:0", "--tls-addr", "127.0.0.1:0", "--ca-dir", dir)
	m := regexp.MustCompile(`HTTPS\s+(https://\S+)`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no HTTPS line in the banner:\n%s", s.stdout)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(first))
	c := &http.Client{Timeout: waitLimit, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Time: time.Now}}}
	defer c.CloseIdleConnections()
	res, err := c.Get(m[1] + "/_emulator/ca.pem")
	if err != nil {
		t.Fatalf("HTTPS with the CA of --ca-dir: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != first {
		t.Errorf("ca.pem over HTTPS differs from hostemu ca's")
	}
}
