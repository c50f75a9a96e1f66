package truststore_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/truststore"
)

// newCA is a fresh CA's certificate (PEM) and its nickname.
func newCA(t *testing.T) (certPEM []byte, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "truststore test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), truststore.Nickname(cert)
}

// certutil is NSS's certutil, or the test is skipped.
func certutil(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("certutil")
	if err != nil {
		t.Skip("certutil not installed (Debian: apt install libnss3-tools)")
	}
	return p
}

// trusts reports whether the NSS database db (certutil -d form) trusts the CA named name
// to issue TLS server certificates.
func trusts(t *testing.T, certutil, db, name string) bool {
	t.Helper()
	return exec.Command(certutil, "-V", "-d", db, "-u", "L", "-n", name).Run() == nil
}

// Install creates Chromium's NSS database on a fresh home (a bare certutil -A would fail
// there with SEC_ERROR_BAD_DATABASE), gives a Firefox profile with none its own, adds
// to an existing one, trusts the CA in each for TLS; Uninstall takes it out of all.
func TestNSS(t *testing.T) {
	t.Parallel()
	cu := certutil(t)
	home := t.TempDir()
	fresh := filepath.Join(home, ".mozilla", "firefox", "abcd.default-release")
	existing := filepath.Join(home, ".mozilla", "firefox", "efgh.dev")
	notAProfile := filepath.Join(home, ".mozilla", "firefox", "Crash Reports")
	for _, d := range []string{fresh, existing, notAProfile} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(fresh, "prefs.js"), nil, 0o600)
	if out, err := exec.Command(cu, "-N", "-d", "sql:"+existing, "--empty-password").CombinedOutput(); err != nil {
		t.Fatalf("certutil -N: %v %s", err, out)
	}
	// a bare add on a fresh profile fails: the README's old one-liner
	if out, err := exec.Command(cu, "-A", "-d", "sql:"+filepath.Join(home, ".pki", "nssdb"), "-t", "C,,", "-n", "x", "-i", "/dev/null").CombinedOutput(); err == nil || !bytes.Contains(out, []byte("SEC_ERROR_BAD_DATABASE")) {
		t.Errorf("certutil -A on a missing database: %v %s, want SEC_ERROR_BAD_DATABASE", err, out)
	}

	certPEM, name := newCA(t)
	var log bytes.Buffer
	o := truststore.Options{CertPEM: certPEM, Home: home, Log: &log}
	if err := truststore.Install(o); err != nil {
		t.Fatalf("Install: %v", err)
	}
	dbs := []string{"sql:" + filepath.Join(home, ".pki", "nssdb"), "sql:" + fresh, "sql:" + existing}
	for _, db := range dbs {
		if !trusts(t, cu, db, name) {
			t.Errorf("%s does not trust the CA; log:\n%s", db, &log)
		}
	}
	if _, err := os.Stat(filepath.Join(notAProfile, "cert9.db")); err == nil {
		t.Error("a database was made in a directory that is not a Firefox profile")
	}
	if err := truststore.Install(o); err != nil { // again: nothing breaks
		t.Fatalf("Install again: %v", err)
	}
	if err := truststore.Uninstall(o); err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
	for _, db := range dbs {
		if exec.Command(cu, "-L", "-d", db, "-n", name).Run() == nil {
			t.Errorf("%s still holds the CA after Uninstall", db)
		}
	}
	if err := truststore.Uninstall(o); err != nil {
		t.Errorf("Uninstall with nothing to remove: %v", err)
	}
}

// The system store gets the CA as an anchor file and its command rebuilds the bundle;
// uninstall removes the file and rebuilds again. A failing command is an error.
func TestSystemStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ran := filepath.Join(dir, "rebuilt")
	sys := &truststore.System{Dir: dir, Ext: ".crt", Command: []string{"sh", "-c", `echo x >> "$0"`, ran}}
	certPEM, name := newCA(t)
	o := truststore.Options{CertPEM: certPEM, System: sys, NoNSS: true}
	if err := truststore.Install(o); err != nil {
		t.Fatalf("Install: %v", err)
	}
	anchor := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".crt")
	if b, err := os.ReadFile(anchor); err != nil || !bytes.Equal(b, certPEM) {
		t.Fatalf("anchor %s: %v", anchor, err)
	}
	if err := truststore.Uninstall(o); err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
	if _, err := os.Stat(anchor); err == nil {
		t.Error("anchor still there after Uninstall")
	}
	if b, _ := os.ReadFile(ran); string(b) != "x\nx\n" {
		t.Errorf("the rebuild command ran %q, want twice", b)
	}
	sys.Command = []string{"false"}
	if err := truststore.Install(o); err == nil || !strings.Contains(err.Error(), "system store") {
		t.Errorf("Install with a failing rebuild: %v", err)
	}
}

// Nothing to install into is an error, and so is something that is not a CA.
func TestInstallErrors(t *testing.T) {
	t.Parallel()
	certPEM, _ := newCA(t)
	if err := truststore.Install(truststore.Options{CertPEM: certPEM, NoNSS: true}); err == nil {
		t.Error("Install with no store: no error")
	}
	if err := truststore.Install(truststore.Options{CertPEM: []byte("nope"), NoNSS: true}); err == nil {
		t.Error("Install of no certificate: no error")
	}
	// no certutil: a fresh home is skipped with a note; an existing database is an error
	home := t.TempDir()
	var log bytes.Buffer
	o := truststore.Options{CertPEM: certPEM, Home: home, Certutil: filepath.Join(t.TempDir(), "certutil"), Log: &log, System: &truststore.System{Dir: t.TempDir(), Ext: ".crt"}}
	if err := truststore.Install(o); err != nil || !strings.Contains(log.String(), "libnss3-tools") {
		t.Errorf("no certutil, fresh home: %v; log %q", err, &log)
	}
	os.MkdirAll(filepath.Join(home, ".pki", "nssdb"), 0o700)
	os.WriteFile(filepath.Join(home, ".pki", "nssdb", "cert9.db"), nil, 0o600)
	if err := truststore.Install(o); err == nil || !strings.Contains(err.Error(), "certutil not found") {
		t.Errorf("no certutil, a database: %v", err)
	}
}
