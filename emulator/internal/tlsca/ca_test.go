package tlsca_test

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/tlsca"
)

// Leaves verify against the root, through the issuer's intermediate when one is named,
// and one Spec is minted once; a new window or expiry mints a new one.
func TestLeafChainAndCache(t *testing.T) {
	t.Parallel()
	ca, err := tlsca.Generate()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	spec := tlsca.Spec{Names: []string{"*.example.test"}, Issuer: "Test Issuer R1", NotBefore: at, NotAfter: at.Add(90 * 24 * time.Hour)}
	c1, err := ca.Leaf(spec)
	if err != nil {
		t.Fatal(err)
	}
	inter := x509.NewCertPool()
	in, _ := x509.ParseCertificate(c1.Certificate[1])
	inter.AddCert(in)
	if in.Subject.CommonName != "Test Issuer R1" {
		t.Errorf("intermediate %q", in.Subject.CommonName)
	}
	opts := x509.VerifyOptions{DNSName: "a.example.test", Roots: ca.Pool(), Intermediates: inter, CurrentTime: at.Add(time.Hour)}
	if _, err := c1.Leaf.Verify(opts); err != nil {
		t.Fatalf("verify: %v", err)
	}
	opts.DNSName = "a.b.example.test"
	if _, err := c1.Leaf.Verify(opts); err == nil {
		t.Error("a wildcard covers two labels")
	}
	if c2, _ := ca.Leaf(spec); c2 != c1 {
		t.Error("the same Spec minted twice")
	}
	spec.NotAfter = spec.NotAfter.Add(time.Hour)
	if c3, _ := ca.Leaf(spec); c3 == c1 || c3.Certificate[1] == nil || string(c3.Certificate[1]) != string(c1.Certificate[1]) {
		t.Error("a new expiry must mint a new leaf under the same intermediate")
	}
	if _, err := ca.Leaf(tlsca.Spec{}); err == nil {
		t.Error("a Spec without names minted")
	}
}

// Load creates the CA once (key 0600, cert 0644) and reads it back; it refuses a
// directory holding half a CA or a key of another certificate.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "ca")
	a, err := tlsca.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tlsca.Load(dir)
	if err != nil || !a.Certificate().Equal(b.Certificate()) {
		t.Fatalf("reload: %v", err)
	}
	fi, _ := os.Stat(filepath.Join(dir, tlsca.KeyFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode())
	}
	other := t.TempDir()
	if _, err := tlsca.Load(other); err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(filepath.Join(other, tlsca.KeyFile))
	os.WriteFile(filepath.Join(dir, tlsca.KeyFile), key, 0o600)
	if _, err := tlsca.Load(dir); err == nil || !strings.Contains(err.Error(), "does not hold the key") {
		t.Errorf("mismatched key: %v", err)
	}
	os.Remove(filepath.Join(dir, tlsca.KeyFile))
	if _, err := tlsca.Load(dir); err == nil || !strings.Contains(err.Error(), "not the other") {
		t.Errorf("half a CA: %v", err)
	}
}

// BenchmarkMintCold mints a leaf for a name never seen (a fresh P-256 key, signed by an
// existing intermediate): the cost of a first handshake for a new name.
func BenchmarkMintCold(b *testing.B) {
	ca, _ := tlsca.Generate()
	at := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	spec := tlsca.Spec{Names: []string{"warm.test"}, Issuer: "Bench Issuer", NotBefore: at, NotAfter: at.Add(time.Hour)}
	ca.Leaf(spec) // the intermediate exists: only the leaf is cold
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		spec.Names = []string{"host-" + strconv.Itoa(i) + ".test"}
		if _, err := ca.Leaf(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeafCached finds a leaf minted before.
func BenchmarkLeafCached(b *testing.B) {
	ca, _ := tlsca.Generate()
	at := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	spec := tlsca.Spec{Names: []string{"shop.test"}, Issuer: "Bench Issuer", NotBefore: at, NotAfter: at.Add(time.Hour)}
	ca.Leaf(spec)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ca.Leaf(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// A leaf whose emulated issue time runs ahead of the wall (a manual clock moved by an
// await) is still valid for a real client, which verifies at wall time: NotBefore is
// backdated to the earlier of the issue time and the wall less NotBeforeMargin; NotAfter
// stays the Spec's (the API's tls.expires_at).
func TestLeafValidAtWallTime(t *testing.T) {
	t.Parallel()
	ca, err := tlsca.Generate()
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Now()
	for _, ahead := range []time.Duration{12 * time.Second, 48 * time.Hour, -time.Hour} {
		at := wall.Add(ahead)
		spec := tlsca.Spec{Names: []string{"shop.test"}, NotBefore: at, NotAfter: at.Add(90 * 24 * time.Hour)}
		c, err := ca.Mint(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: "shop.test", Roots: ca.Pool(), CurrentTime: wall}); err != nil {
			t.Errorf("clock %v ahead of the wall: not valid at wall time: %v", ahead, err)
		}
		if ahead < 0 && !c.Leaf.NotBefore.Equal(at.Truncate(time.Second)) {
			t.Errorf("issue time behind the wall: NotBefore %v, want the issue time %v", c.Leaf.NotBefore, at)
		}
		if !c.Leaf.NotAfter.Equal(spec.NotAfter.Truncate(time.Second)) {
			t.Errorf("NotAfter %v, want %v", c.Leaf.NotAfter, spec.NotAfter)
		}
	}
}

// A kept key that others can read (0644, say after a copy) is made 0600 before it is
// used, and Repaired says so for the caller's warning (issue 32: it was used as it was,
// without a word).
func TestLoadMakesAnOpenKeyPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := tlsca.Load(dir); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, tlsca.KeyFile)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	ca, err := tlsca.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(keyPath)
	if fi.Mode().Perm() != 0o600 || !strings.Contains(ca.Repaired(), "mode 0644") {
		t.Errorf("key mode %v after loading, repaired %q", fi.Mode().Perm(), ca.Repaired())
	}
	if again, err := tlsca.Load(dir); err != nil || again.Repaired() != "" {
		t.Errorf("a private key: %v, repaired %q", err, again.Repaired())
	}
}
