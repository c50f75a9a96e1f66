package testkit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// EdgeClient returns an HTTP client that reaches the emulator's edge for any host, so a
// test fetches a deployment's exact URL, or a custom domain's, as the API handed it out:
//
//	res, err := emu.EdgeClient().Get(deployment.URL) // https://shop-abc….hostemu.localhost/
//	leaf := res.TLS.PeerCertificates[0]               // issuer and expiry as the domain's tls says
//
// Every connection goes to the emulator, whatever the URL's host and port (a
// deployment's url carries the HTTPS listener's port; *.localhost need not resolve on
// this machine, nor in a CI job's container): http URLs to its
// plain listener (the edge routes by the Host header, which keeps the URL's), https
// URLs over real TLS, to Start's HTTPS listener or, for Connect and WithoutTLS,
// through the plain listener as a proxy (CONNECT). The client trusts the emulator's CA
// alone and checks certificates at the emulator's time, so a manual clock months ahead
// still verifies, and a certificate the emulator would not serve fails the handshake.
// Redirects (a domain's 308) are followed like any client would; use CheckRedirect to
// see them instead.
func (e *Emulator) EdgeClient() *http.Client {
	e.tb.Helper()
	u, err := url.Parse(e.r.url)
	if err != nil {
		e.tb.Fatalf("testkit: emulator URL %q: %v", e.r.url, err)
	}
	conf := &tls.Config{RootCAs: e.CACertPool(), Time: e.r.emulatedNow}
	plain := e.r.transport.Clone()
	plain.Proxy = nil
	plain.DialContext = dialTo(u.Host)
	secure := e.r.transport.Clone()
	secure.TLSClientConfig = conf
	if e.r.tlsURL != "" {
		secure.Proxy = nil
		secure.DialContext = dialTo(strings.TrimPrefix(e.r.tlsURL, "https://"))
	} else {
		proxy := *u
		if e.r.namespace != "" { // the tunnel serves the test's namespace
			proxy.User = url.UserPassword(e.r.namespace, "")
		}
		secure.Proxy = http.ProxyURL(&proxy)
	}
	e.tb.Cleanup(plain.CloseIdleConnections)
	e.tb.Cleanup(secure.CloseIdleConnections)
	return &http.Client{Transport: byScheme{plain: plain, secure: secure, namespace: e.r.namespace}, Timeout: clientTimeout}
}

// dialTo dials addr whatever address a request asks for.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}

// byScheme sends https requests over one transport, the rest over the other; plain
// requests name the test's namespace (X-Hostemu-Namespace), which a custom domain's
// host does not.
type byScheme struct {
	plain, secure http.RoundTripper
	namespace     string
}

func (b byScheme) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" {
		return b.secure.RoundTrip(r)
	}
	if b.namespace != "" && r.Header.Get("X-Hostemu-Namespace") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-Hostemu-Namespace", b.namespace)
	}
	return b.plain.RoundTrip(r)
}

// CACertPool is a pool holding the emulator's CA certificate alone, for the RootCAs of
// a client of your own (GET /_emulator/ca.pem for Connect). Certificates are valid on
// the emulator's clock: on a manual clock far from now, set tls.Config.Time too (see
// EdgeClient).
func (e *Emulator) CACertPool() *x509.CertPool {
	e.tb.Helper()
	e.r.caOnce.Do(func() { e.r.caPool, e.r.caErr = e.r.fetchCA() })
	if e.r.caErr != nil {
		e.tb.Fatalf("testkit: the emulator's CA: %v", e.r.caErr)
	}
	return e.r.caPool
}

func (r *remote) fetchCA() (*x509.CertPool, error) {
	if r.srv != nil {
		return r.srv.Emulator().CACertPool(), nil
	}
	var pem []byte
	if err := r.do(context.Background(), http.MethodGet, "/_emulator/ca.pem", nil, &pem); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("GET /_emulator/ca.pem answered no PEM certificate: %.80q", pem)
	}
	return pool, nil
}

// emulatedNow is the emulator's time, at which certificates are checked: read in
// process for Start, asked of the control API for Connect (the real time if that fails:
// the handshake then fails as it would for any client).
func (r *remote) emulatedNow() time.Time {
	if r.srv != nil {
		return r.srv.Emulator().Now()
	}
	var c clockView
	if err := r.do(context.Background(), http.MethodGet, "/_emulator/clock", nil, &c); err != nil {
		r.log.Warn("testkit: reading the emulator's clock for a TLS handshake", "err", err)
		return time.Now()
	}
	return c.Now
}

// TLSURL is the HTTPS listener's base URL, e.g. https://127.0.0.1:41235 (Start without
// WithoutTLS; "" otherwise). Its certificates come from the emulator's CA: see
// CACertPool.
func (e *Emulator) TLSURL() string { return e.r.tlsURL }
