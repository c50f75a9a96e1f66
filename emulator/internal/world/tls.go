package world

import (
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// DomainCertificate is the certificate of a custom domain as its tls object states it:
// what a TLS client asking for one of its hosts is served.
type DomainCertificate struct {
	// Hostname is the domain's name, "shop.example.test" or "*.example.test".
	Hostname string
	// Issuer is tls.issuer: the common name of the intermediate that signs it.
	Issuer string
	// IssuedAt is when it was issued or last renewed; ExpiresAt is tls.expires_at.
	IssuedAt, ExpiresAt time.Time
}

// DomainCertificate returns the certificate served for host: that of the custom domain
// the edge routes host to (the exact domain, else the wildcard of host's parent for a
// single-label subdomain), while its tls.status is issued. A deleted domain keeps its
// certificate until it detaches. false when none is served: no such domain, pending,
// error, or detached.
//
// The state records when a certificate expires, not when it was issued; every issue
// and renewal sets expires_at to the instant plus valid_for, so the issue instant is
// expires_at less the active scenario's valid_for (never after now).
func (w *World) DomainCertificate(host string) (DomainCertificate, bool) {
	if host == "" || strings.IndexByte(host, '*') >= 0 {
		return DomainCertificate{}, false
	}
	w.fireDue()
	d, ok := w.attachedDomain(host)
	if !ok && strings.Contains(host, ".") {
		_, parent, _ := strings.Cut(host, ".")
		d, ok = w.attachedDomain("*." + parent)
	}
	// A failed renewal (tls error on an active domain) keeps serving the certificate in
	// force until it expires, as a real host does.
	inForce := d.TLS.Status == state.TLSIssued || (d.TLS.Status == state.TLSError && d.Status == state.StatusActive)
	if !ok || !inForce || d.TLS.ExpiresAt == nil || d.TLS.Issuer == nil {
		return DomainCertificate{}, false
	}
	exp := *d.TLS.ExpiresAt
	issued := exp.Add(-w.Scenario().Certificates.ValidFor)
	if now := w.clock.Now(); issued.After(now) {
		issued = now.Truncate(time.Second) // valid_for grew since: never issued in the future
	}
	return DomainCertificate{Hostname: d.Hostname, Issuer: *d.TLS.Issuer, IssuedAt: issued, ExpiresAt: exp}, true
}

// attachedDomain is the domain at exactly hostname that the edge still routes: attached,
// or deleted and not yet detached.
func (w *World) attachedDomain(hostname string) (state.Domain, bool) {
	ed, ok := w.store.EdgeDomain(hostname)
	if !ok || ed.Detached {
		return state.Domain{}, false
	}
	return ed.Domain, true
}
