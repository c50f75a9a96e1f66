package edge

import (
	"net/http"
	"strings"
)

// RequestHost returns the host r is for, normalised by NormalizeHost, and whether r is a
// proxy request. A proxy request is one in absolute form (GET http://host/path, as sent
// to an HTTP proxy): its host is the URL's, not the Host header's. Requests built for a
// client rather than read by a server (RequestURI empty) are never proxy requests.
func RequestHost(r *http.Request) (host string, proxy bool) {
	if isAbsoluteForm(r.RequestURI) && r.URL != nil && r.URL.Host != "" {
		return NormalizeHost(r.URL.Host), true
	}
	return NormalizeHost(r.Host), false
}

func isAbsoluteForm(uri string) bool {
	// The request target starts with a scheme: "/path", "*" and "host:port" (CONNECT) do not.
	return hasPrefixFold(uri, "http://") || hasPrefixFold(uri, "https://")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// NormalizeHost turns a Host header or URL host into the name the edge looks up: the port
// removed, ASCII lower-cased, trailing dots dropped, and IPv6 literals unbracketed
// ("[::1]:4700" → "::1"). Input that cannot be a host (an unclosed bracket, brackets
// inside brackets or around anything but an IPv6 literal) gives "". It is idempotent, and allocates only to lower-case.
func NormalizeHost(h string) string {
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return ""
		}
		if rest := h[end+1:]; rest != "" && rest[0] != ':' {
			return ""
		}
		h = h[1:end]
		if strings.Count(h, ":") < 2 {
			return "" // brackets hold IPv6 literals only; "[a:b]" unbracketed would read as a port
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 && strings.IndexByte(h[i+1:], ':') < 0 {
		h = h[:i] // one colon: host:port; more is a bare IPv6 literal, kept whole
	}
	for len(h) > 0 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	upper := false
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '[' || c == ']':
			return ""
		case c >= 'A' && c <= 'Z':
			upper = true
		}
	}
	if !upper {
		return h
	}
	b := []byte(h)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
