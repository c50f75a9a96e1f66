package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spec says what a leaf certificate holds. Two equal Specs share one certificate.
type Spec struct {
	// Names are the DNS names ("shop.example.test", "*.example.test") and IP addresses
	// ("127.0.0.1", "::1") it is valid for; the first is also its common name.
	Names []string
	// Issuer is the common name of the intermediate that signs it; "" signs it with the
	// root directly.
	Issuer string
	// NotBefore and NotAfter bound its validity; the minted NotBefore is backdated to the
	// wall time less NotBeforeMargin when NotBefore is later (see validFrom).
	NotBefore, NotAfter time.Time
}

// key identifies a Spec in the cache. Names cannot hold "\n" (the caller passes
// normalised hosts), and the times are taken to the nanosecond, location aside.
func (s Spec) key() string {
	var b strings.Builder
	for _, n := range s.Names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	b.WriteString(s.Issuer)
	b.WriteByte('\n')
	b.WriteString(strconv.FormatInt(s.NotBefore.UnixNano(), 10))
	b.WriteByte('\n')
	b.WriteString(strconv.FormatInt(s.NotAfter.UnixNano(), 10))
	return b.String()
}

type leafEntry struct {
	once sync.Once
	cert *tls.Certificate
	err  error
}

type intermediateItem struct {
	once sync.Once
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	err  error
}

// Leaf returns the certificate of s, minting it on first use: a fresh P-256 key, signed
// by the root or by s.Issuer's intermediate (also made on first use, and kept). The
// chain it carries is the leaf and its intermediate, never the root, which the client
// trusts. Concurrent first uses of one Spec mint it once.
func (ca *CA) Leaf(s Spec) (*tls.Certificate, error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	k := s.key()
	ca.mu.Lock()
	e, ok := ca.leaves[k]
	if !ok {
		if len(ca.leaves) >= maxLeaves {
			for old := range ca.leaves { // drop any one: a later use mints it again
				delete(ca.leaves, old)
				break
			}
		}
		e = &leafEntry{}
		ca.leaves[k] = e
	}
	ca.mu.Unlock()
	e.once.Do(func() { e.cert, e.err = ca.mint(s) })
	return e.cert, e.err
}

// Mint makes the certificate of s without looking in or filling the cache (the cold
// path of Leaf, for benchmarks and tests).
func (ca *CA) Mint(s Spec) (*tls.Certificate, error) {
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	return ca.mint(s)
}

func (ca *CA) mint(s Spec) (*tls.Certificate, error) {
	parent, parentKey := ca.cert, ca.key
	var chain [][]byte
	if s.Issuer != "" {
		in, err := ca.intermediate(s.Issuer)
		if err != nil {
			return nil, err
		}
		parent, parentKey = in.cert, in.key
		chain = [][]byte{in.cert.Raw}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: s.Names[0], Organization: []string{Organization}},
		NotBefore:             validFrom(s.NotBefore, time.Now()),
		NotAfter:              s.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, n := range s.Names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	leaf, err := sign(tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: append([][]byte{leaf.Raw}, chain...), PrivateKey: key, Leaf: leaf}, nil
}

// NotBeforeMargin is how far before the wall time a leaf's NotBefore is put when the
// emulated issue time is later than the wall: enough for a client whose clock lags the
// host's by a little.
const NotBeforeMargin = 5 * time.Minute

// validFrom is a leaf's NotBefore: the earlier of the emulated issue time and the wall
// time less NotBeforeMargin. Real clients verify at wall time, and a manual clock may run
// ahead of it (an await moves it), so the emulated issue time alone would make a fresh
// certificate "not yet valid". Reading the wall here, outside Spec.key, keeps the cache
// keyed by the Spec: a cached leaf only gets more valid as the wall advances.
func validFrom(issued, wall time.Time) time.Time {
	if w := wall.Add(-NotBeforeMargin); w.Before(issued) {
		return w
	}
	return issued
}

// intermediate returns the intermediate whose common name is issuer, made on first use.
// Intermediates are kept for the process's life: a scenario names a handful of issuers.
func (ca *CA) intermediate(issuer string) (*intermediateItem, error) {
	ca.mu.Lock()
	in, ok := ca.intermediates[issuer]
	if !ok {
		in = &intermediateItem{}
		ca.intermediates[issuer] = in
	}
	ca.mu.Unlock()
	in.once.Do(func() {
		in.key, in.err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if in.err != nil {
			return
		}
		tmpl := &x509.Certificate{
			Subject:               pkix.Name{CommonName: issuer, Organization: []string{Organization}},
			NotBefore:             caNotBefore,
			NotAfter:              caNotAfter,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true,
			IsCA:                  true,
			MaxPathLenZero:        true,
		}
		in.cert, in.err = sign(tmpl, ca.cert, &in.key.PublicKey, ca.key)
	})
	return in, in.err
}
