package testkit

import (
	"context"
	"net"
	"net/http"
	"net/url"
)

// EdgeClient returns an HTTP client that reaches the emulator's edge for any host, so a
// test fetches a deployment's exact URL, or a custom domain's, as the API handed it out:
//
//	res, err := emu.EdgeClient().Get(deployment.URL) // https://shop-abc….hostemu.localhost/
//
// Every connection goes to the emulator, whatever the URL's host (the edge routes by
// the Host header, which keeps the URL's). Until hostemu serves TLS, https URLs are
// fetched over plain HTTP on the emulator's port: the scheme is the only thing the
// client changes. Redirects (a domain's 308) are followed like any client would; use
// CheckRedirect to see them instead.
func (e *Emulator) EdgeClient() *http.Client {
	u, err := url.Parse(e.r.url)
	if err != nil {
		e.tb.Fatalf("testkit: emulator URL %q: %v", e.r.url, err)
	}
	addr := u.Host
	var d net.Dialer
	tr := e.r.transport.Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: plainEdge{tr}, Timeout: clientTimeout}
}

// plainEdge sends https requests as http ones to the emulator (which serves no TLS yet).
type plainEdge struct{ rt http.RoundTripper }

func (p plainEdge) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" {
		r2 := r.Clone(r.Context())
		r2.URL.Scheme = "http"
		return p.rt.RoundTrip(r2)
	}
	return p.rt.RoundTrip(r)
}
