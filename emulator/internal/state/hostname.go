package state

import (
	"fmt"
	"strings"
)

// NormalizeHostname lower-cases a hostname, drops one trailing dot, and checks that it
// is a fully qualified domain name, optionally with one leading "*." label: at least two
// labels, each 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen,
// at most 253 characters, and a top-level label that is not all digits.
func NormalizeHostname(h string, allowWildcard bool) (string, bool) {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	rest := h
	if strings.HasPrefix(rest, "*.") {
		if !allowWildcard {
			return "", false
		}
		rest = rest[2:]
	}
	if len(h) > MaxNameLen || !ValidName(rest) || !strings.Contains(rest, ".") {
		return "", false
	}
	tld := rest[strings.LastIndexByte(rest, '.')+1:]
	if strings.Trim(tld, "0123456789") == "" {
		return "", false
	}
	return h, true
}

// KeptFor is the domain hostemu keeps for itself that a custom domain's hostname (a
// "*." wildcard's included) falls under: "localhost" (browsers treat *.localhost as this
// machine) or the edge domain (deployment hosts), else "". The edge serves pages on
// these names, so a customer's domain there would let a page share an origin with
// hostemu's own (docs/security.md): the API refuses one, and so does a state import.
func KeptFor(host, edgeDomain string) string {
	name := strings.TrimPrefix(host, "*.")
	under := func(domain string) bool { return name == domain || strings.HasSuffix(name, "."+domain) }
	switch {
	case under("localhost"):
		return "localhost"
	case edgeDomain != "" && under(edgeDomain):
		return edgeDomain
	}
	return ""
}

// CheckRedirect is the one rule for redirect (a normalized hostname) as the redirect_to
// of custom domain host, for the API and fixtures alike: self says it names
// the domain itself (a loop); kept is the domain hostemu keeps for itself that it falls
// under (KeptFor), else "". Any other hostname may be one, as the spec says ("a
// hostname"): in the project or not. A kept one is refused because a 308 keeps the
// method and body: a customer's request would land on hostemu's own names.
func CheckRedirect(host, redirect, edgeDomain string) (self bool, kept string) {
	if redirect == host {
		return true, ""
	}
	return false, KeptFor(redirect, edgeDomain)
}

// CheckKept reports the first custom domain of s under a domain hostemu keeps for
// itself (KeptFor), as an import refuses it: the edge would serve pages on that name.
// A redirect_to under one is not refused here (CheckKeptRedirects is fixtures'): an
// older hostemu's API accepted it, and a state file or bundle it wrote must still load;
// the edge serves no page as that name, it only sends a 308 there.
func (s *Snapshot) CheckKept(edgeDomain string) error {
	for i := range s.Domains {
		if kept := KeptFor(s.Domains[i].Hostname, edgeDomain); kept != "" {
			return fmt.Errorf("domain %q: the hostname is under %q, which hostemu keeps for itself (the API refuses it: invalid_hostname); use a name under .test or .example", s.Domains[i].Hostname, kept)
		}
	}
	return nil
}

// CheckKeptRedirects reports the first custom domain of s redirecting to a name under
// a domain hostemu keeps (CheckRedirect), as fixtures refuse it, by the API's rule.
func (s *Snapshot) CheckKeptRedirects(edgeDomain string) error {
	for i := range s.Domains {
		d := &s.Domains[i]
		if d.RedirectTo == "" {
			continue
		}
		if _, kept := CheckRedirect(d.Hostname, d.RedirectTo, edgeDomain); kept != "" {
			return fmt.Errorf("domain %q: redirect_to %q is under %q, which hostemu keeps for itself (the API refuses it: invalid_hostname)", d.Hostname, d.RedirectTo, kept)
		}
	}
	return nil
}

// MaxNameLen is the longest DNS name, in bytes (RFC 1035), for every name hostemu
// checks: custom domains, SNI names, --edge-domain.
const MaxNameLen = 253

// ValidName reports whether h is a lower-case DNS name: at most MaxNameLen bytes of
// dot-separated labels, each a ValidLabel.
func ValidName(h string) bool {
	if h == "" || len(h) > MaxNameLen {
		return false
	}
	for l := range strings.SplitSeq(h, ".") {
		if !ValidLabel(l) {
			return false
		}
	}
	return true
}

// ValidLabel reports whether l is a DNS label of lowercase letters, digits and inner
// hyphens, at most 63 long.
func ValidLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Apex guesses the registrable domain of a hostname: its last two labels. hostemu's
// DNS instructions name records relative to it ("@", "www", "*").
func Apex(h string) string {
	h = strings.TrimPrefix(h, "*.")
	i := strings.LastIndexByte(h, '.')
	if i < 0 {
		return h
	}
	if j := strings.LastIndexByte(h[:i], '.'); j >= 0 {
		return h[j+1:]
	}
	return h
}
