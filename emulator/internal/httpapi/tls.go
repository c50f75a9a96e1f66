package httpapi

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/tlsca"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Leaves for hostemu's own names and deployment hosts are valid in a window of the
// emulator's clock: from the start of the day before now, for leafWindow (within what
// browsers accept of a leaf). A clock moved out of the window gets a new certificate.
const leafWindow = 90 * 24 * time.Hour

// TLSConfig is the server side of every TLS connection hostemu terminates (the
// --tls-addr listener and CONNECT tunnels): a certificate minted per SNI name, HTTP/2
// or HTTP/1.1.
func (a *API) TLSConfig() *tls.Config { return a.tlsConfigOf(a.w) }

// tlsConfigOf is TLSConfig with the custom domains of world wd (a namespace's CONNECT
// tunnel).
func (a *API) tlsConfigOf(wd *world.World) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return a.getCertificate(wd, hello)
		},
	}
}

// getCertificate serves the certificate for the client's SNI name. A name hostemu has no
// certificate for gets none: returning no certificate and no error makes crypto/tls
// fail the handshake with the unrecognized_name alert (an error would send
// internal_error).
func (a *API) getCertificate(wd *world.World, hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	spec, ok := a.certSpec(wd, hello.ServerName, localIP(hello.Conn))
	if !ok {
		a.log.Debug("TLS handshake refused: no certificate for the name", "server_name", hello.ServerName)
		return nil, nil
	}
	return a.cfg.CA.Leaf(spec)
}

func localIP(c net.Conn) net.IP {
	if c == nil {
		return nil
	}
	if tcp, ok := c.LocalAddr().(*net.TCPAddr); ok {
		return tcp.IP
	}
	return nil
}

// certSpec says which certificate a TLS client asking for serverName is served, on a
// connection to local: hostemu's own names (no SNI, as clients send for an IP address),
// a host under the edge domain, or a custom domain whose certificate is issued.
func (a *API) certSpec(wd *world.World, serverName string, local net.IP) (tlsca.Spec, bool) {
	host := edge.NormalizeHost(serverName)
	if serverName != "" && !validSNI(host) {
		return tlsca.Spec{}, false // nothing to mint a certificate for
	}
	now := wd.Now()
	if host == "" || a.isSelf(host, addrOf(local)) {
		names := a.ownNames(local)
		if host != "" && !slices.Contains(names, host) {
			names = append(names, host) // another loopback address, say 127.0.1.1
		}
		return a.windowed(names, now), true
	}
	if _, under, _ := edge.ParseEdgeHost(host, wd.EdgeDomain()); under {
		return a.windowed([]string{host}, now), true
	}
	dc, ok := wd.DomainCertificate(host)
	if !ok {
		return tlsca.Spec{}, false
	}
	return tlsca.Spec{Names: []string{dc.Hostname}, Issuer: dc.Issuer, NotBefore: dc.IssuedAt, NotAfter: dc.ExpiresAt}, true
}

// windowed is a certificate for names valid around now: the same Spec all day long, so
// that it is minted once a day of emulated time at most.
func (a *API) windowed(names []string, now time.Time) tlsca.Spec {
	from := now.UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
	return tlsca.Spec{Names: names, NotBefore: from, NotAfter: from.Add(leafWindow)}
}

// ownNames are the names of hostemu's own certificate: localhost, 127.0.0.1, ::1,
// --public-url's host, and the address the client connected to when it is another one
// (a container's, say).
func (a *API) ownNames(local net.IP) []string {
	names := []string{"localhost", "127.0.0.1", "::1"}
	if a.publicHost != "" && a.publicHost != "localhost" && !isLoopbackName(a.publicHost) {
		names = append(names, a.publicHost)
	}
	if local != nil && !local.IsLoopback() && !local.IsUnspecified() && local.String() != a.publicHost {
		names = append(names, local.String())
	}
	return names
}

func isLoopbackName(h string) bool {
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// caPEM answers the CA's certificate, PEM-encoded: what a client trusts to verify the
// certificates hostemu serves.
func (a *API) caPEM(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "application/x-pem-file", a.cfg.CA.CertPEM())
}

// validSNI reports whether an SNI name (normalised) can be a certificate's name: an IP
// address or a DNS name (state.ValidName).
func validSNI(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil || state.ValidName(host)
}

// addrOf is ip as a netip.Addr (the zero Addr for nil).
func addrOf(ip net.IP) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}
