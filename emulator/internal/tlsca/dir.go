package tlsca

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The files of a CA directory.
const (
	CertFile = "ca.pem"     // the root certificate, mode 0644: what clients trust
	KeyFile  = "ca-key.pem" // its private key (PKCS #8), mode 0600: keep it private
)

// maxFile bounds what Load reads of each file: a certificate or key is a few hundred
// bytes.
const maxFile = 64 << 10

// Load returns the CA kept in dir, creating the directory (0700) and a new CA in it
// when it holds neither file, so that every start with the same dir has the same CA. A
// directory with one file and not the other, or files that do not make a CA, is an
// error: Load never replaces a CA someone may already trust.
func Load(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return read(certPath, keyPath)
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		return create(dir, certPath, keyPath)
	case certErr != nil && !errors.Is(certErr, fs.ErrNotExist):
		return nil, certErr
	case keyErr != nil && !errors.Is(keyErr, fs.ErrNotExist):
		return nil, keyErr
	}
	return nil, fmt.Errorf("CA directory %s holds one of %s and %s but not the other: restore it, or empty the directory for a new CA (which clients must trust again)", dir, CertFile, KeyFile)
}

func read(certPath, keyPath string) (*CA, error) {
	// a key others can read (0644, left by a copy or an unzip) is made private before
	// it is used: whoever holds it can sign for any name this machine trusts
	repaired, err := private(keyPath)
	if err != nil {
		return nil, err
	}
	certDER, err := readPEM(certPath, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	keyDER, err := readPEM(keyPath, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", certPath, err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", keyPath, err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ECDSA key", keyPath)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("%s does not hold the key of %s", keyPath, certPath)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	ca := newCA(cert, key)
	ca.repaired = repaired
	return ca, nil
}

// private sets the key file's mode to 0600 when its group or others may read or write
// it, and says so; a key it cannot make private is an error, never used.
func private(keyPath string) (string, error) {
	fi, err := os.Stat(keyPath)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return "", nil
	}
	if err := os.Chmod(keyPath, 0o600); err != nil {
		return "", fmt.Errorf("%s is readable by others (mode %04o) and could not be made private: %v; run chmod 600 on it", keyPath, fi.Mode().Perm(), err)
	}
	return fmt.Sprintf("%s was readable by others (mode %04o): its mode is now 0600; whoever read it could sign certificates this machine trusts, consider a new CA (empty the directory, then hostemu ca install)", keyPath, fi.Mode().Perm()), nil
}

// Repaired says what Load fixed of the CA's files (a key readable by others made
// 0600), "" when nothing: a warning for its caller to log.
func (ca *CA) Repaired() string { return ca.repaired }

func readPEM(path, typ string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(buf) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a PEM %s", path, maxFile, typ)
	}
	block, _ := pem.Decode(buf)
	if block == nil || block.Type != typ {
		return nil, fmt.Errorf("%s: no PEM %s block", path, typ)
	}
	return block.Bytes, nil
}

// create makes a new CA in dir. The key is written first, exclusively and 0600, so
// that two processes starting at once cannot both write one: the loser reads the
// winner's CA (and fails, to be started again, if it comes before the certificate).
func create(dir, certPath, keyPath string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := Generate()
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		return nil, err
	}
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return read(certPath, keyPath)
		}
		return nil, err
	}
	if err := writeNew(certPath, ca.certPEM, 0o644); err != nil {
		os.Remove(keyPath)
		return nil, err
	}
	return ca, nil
}

// writeNew writes a file that must not exist yet, with exactly mode perm (whatever the
// umask), and syncs it.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
