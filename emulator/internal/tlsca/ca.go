// Package tlsca is hostemu's local certificate authority: an ECDSA P-256 root, generated
// at start or kept in a directory so that a developer trusts it once, and the leaf
// certificates it signs on first use, directly or through an intermediate named after
// a domain's issuer. It knows nothing of HTTP nor of the world: callers say what each
// certificate holds (Spec), and the CA mints and caches it.
package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// Organization names every certificate the CA makes, so that a person who finds one in
// a trust store knows what it is.
const Organization = "hostemu (local development only)"

// The CA and its intermediates are valid across every instant the emulator's clock may
// show (state.MinYear to state.MaxYear), so that a chain verifies at the emulator's time
// however far a manual clock is set; leaves carry the real limits.
var (
	caNotBefore = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	caNotAfter  = clock.Limit
)

// maxLeaves bounds the leaf cache: SNI names under the edge domain are the client's
// choice, so a client could otherwise make the cache grow without end.
const maxLeaves = 4096

// CA is a root certificate and key, and the certificates minted from them. It is safe for
// concurrent use.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	// repaired says what Load fixed of the files it read (a key others could read):
	// its caller logs it as a warning.
	repaired string

	mu            sync.Mutex                   // guards the maps below
	leaves        map[string]*leafEntry        // by Spec.key
	intermediates map[string]*intermediateItem // by issuer common name
}

// Generate makes a new CA with a fresh key from crypto/rand: it lives as long as the
// process (see Load for one that persists).
func Generate() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "hostemu local CA " + keyID(&key.PublicKey), Organization: []string{Organization}},
		NotBefore:             caNotBefore,
		NotAfter:              caNotAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            1, // the root, an intermediate, a leaf
	}
	cert, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return newCA(cert, key), nil
}

func newCA(cert *x509.Certificate, key *ecdsa.PrivateKey) *CA {
	return &CA{
		cert: cert, key: key,
		certPEM:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		leaves:        map[string]*leafEntry{},
		intermediates: map[string]*intermediateItem{},
	}
}

// keyID is a short, stable name for a public key: the CA's common name tells two CAs
// apart in a trust store.
func keyID(pub *ecdsa.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:4])
}

// sign makes a certificate from tmpl, signed by parent's key, with a random serial.
func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, parentKey *ecdsa.PrivateKey) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1)) // never zero
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// Certificate is the root certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertPEM is the root certificate, PEM-encoded: what a client trusts.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.certPEM...) }

// Pool is a certificate pool holding the root alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// ErrNoNames is returned for a Spec without names.
var ErrNoNames = errors.New("tlsca: a certificate needs at least one name")

// checkSpec refuses what no certificate can hold.
func checkSpec(s Spec) error {
	if len(s.Names) == 0 {
		return ErrNoNames
	}
	if s.NotAfter.Before(s.NotBefore) {
		return fmt.Errorf("tlsca: %s: not after %s is before not before %s", s.Names[0], s.NotAfter, s.NotBefore)
	}
	return nil
}
