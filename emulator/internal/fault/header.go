package fault

import (
	"net/http"
	"strings"
)

// HeaderMatch is a condition on one header of a request or an answer: present (no
// glob given), or present with a value matching a glob (`*` wildcards, [PathMatch]);
// the name compares in any case, the value as written, several values of one header
// joined by ", " as the journal shows them. It is hostemu's one header matcher: a
// fault's match.headers, and the journal's header= and response_header= filters of
// queries and awaits.
type HeaderMatch struct {
	name     string // canonical: Retry-After
	glob     string
	hasValue bool
}

// NewHeaderMatch is the match of the header name (an RFC 9110 token: ValidHeaderName)
// whose value matches glob, or, when !hasValue, of its presence. ok is false when name
// is not a header name.
func NewHeaderMatch(name, glob string, hasValue bool) (m HeaderMatch, ok bool) {
	if !ValidHeaderName(name) {
		return HeaderMatch{}, false
	}
	return HeaderMatch{name: http.CanonicalHeaderKey(name), glob: glob, hasValue: hasValue}, true
}

// Name is the header's name, canonical (Retry-After).
func (m HeaderMatch) Name() string { return m.name }

// Value reports whether a header present with the value v holds the match.
func (m HeaderMatch) Value(v string) bool { return !m.hasValue || PathMatch(m.glob, v) }

// In reports whether the headers h (names canonical, as net/http keeps a request's)
// hold the match.
func (m HeaderMatch) In(h http.Header) bool {
	v, ok := m.valueIn(h)
	return ok && m.Value(v)
}

// valueIn is the value the match compares in h: its header's values joined by ", ",
// and whether it is there.
func (m HeaderMatch) valueIn(h http.Header) (string, bool) {
	switch v := h[m.name]; len(v) {
	case 0:
		return "", false
	case 1:
		return v[0], true
	default:
		return strings.Join(v, ", "), true
	}
}

// ValidHeaderName reports whether s is a header name: an RFC 9110 token, one or more
// of its tchars (letters, digits and !#$%&'*+-.^_`|~). Faults (match.headers and the
// headers they answer with) and the journal's filters hold names to it alike.
func ValidHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte(s[i]) {
			return false
		}
	}
	return true
}

// tokenByte reports whether c is an RFC 9110 tchar.
func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
