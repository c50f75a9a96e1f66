package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"

	"github.com/hostemu/hostemu/emulator/internal/httpapi"
	"github.com/hostemu/hostemu/emulator/internal/tlsca"
)

// CAInMemory is the CADir that keeps a new CA in memory, as "" does: the command line's
// --ca-dir :memory:, which a Go caller may pass as it is (it never names a directory).
const CAInMemory = ":memory:"

// newCA is the local CA: kept in dir when it is set, else a new one in memory.
func newCA(dir string, fallback bool, log *slog.Logger) (*tlsca.CA, error) {
	if dir == "" || dir == CAInMemory {
		return tlsca.Generate()
	}
	ca, err := tlsca.Load(dir)
	if err != nil && fallback {
		log.Warn("the local CA is kept in memory, new at every start: set --ca-dir to keep it", "err", err)
		return tlsca.Generate()
	}
	if err != nil {
		return nil, &ConfigError{err}
	}
	if msg := ca.Repaired(); msg != "" {
		log.Warn("the CA's key was not private", "problem", msg)
	}
	return ca, nil
}

// serveTunnel serves one CONNECT tunnel until it closes.
func (e *Emulator) serveTunnel(c net.Conn, conf *tls.Config) { httpapi.ServeConn(e.tunnels, c, conf) }

// CACertificate is the local CA's certificate: what a client trusts to verify the
// certificates of the TLS listener and of CONNECT tunnels.
func (e *Emulator) CACertificate() *x509.Certificate { return e.ca.Certificate() }

// CACertPEM is CACertificate, PEM-encoded (as GET /_emulator/ca.pem answers it).
func (e *Emulator) CACertPEM() []byte { return e.ca.CertPEM() }

// CACertPool is a pool holding the CA's certificate alone, for a client's RootCAs.
func (e *Emulator) CACertPool() *x509.CertPool { return e.ca.Pool() }

// TLSConfig is the server side of hostemu's TLS: a certificate per SNI name, minted on
// first use by the local CA (hostemu's own names, deployment hosts, and custom domains
// while their certificate is issued), HTTP/2 or HTTP/1.1. Serve Handler with it to serve
// HTTPS on a listener of your own.
func (e *Emulator) TLSConfig() *tls.Config { return e.api.TLSConfig() }

// TLSURL is the HTTPS listener's base URL, e.g. https://127.0.0.1:4743; "" without
// Options.TLSAddr.
func (s *Server) TLSURL() string {
	if s.tlsLn == nil {
		return ""
	}
	return "https://" + dialable(s.tlsLn.Addr())
}
