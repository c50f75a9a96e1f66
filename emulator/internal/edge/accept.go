package edge

import (
	"strconv"
	"strings"
)

// PrefersJSON reports whether an Accept header ranks application/json above text/html,
// with q-values and the most specific matching range deciding each type's weight, as RFC
// 9110 says. At equal weight, the type named more specifically wins, so that
// "application/json, text/plain, */*" (axios, fetch wrappers) gets JSON; a full tie, an
// empty header or "*/*" get HTML: a browser's page.
func PrefersJSON(accept string) bool {
	if accept == "" {
		return false
	}
	qj, sj := weight(accept, "application", "json")
	qh, sh := weight(accept, "text", "html")
	return qj > 0 && (qj > qh || qj == qh && sj > sh)
}

// weight returns the q-value the header gives typ/sub, from its most specific matching
// range, and that range's specificity: 2 exact, 1 typ/*, 0 */*, -1 none (q 0).
func weight(accept, typ, sub string) (q float64, specificity int) {
	best := -1
	for rng := range strings.SplitSeq(accept, ",") {
		mt, params, _ := strings.Cut(rng, ";")
		t, s, ok := strings.Cut(strings.TrimSpace(mt), "/")
		if !ok {
			continue
		}
		spec := -1
		switch {
		case strings.EqualFold(t, typ) && strings.EqualFold(s, sub):
			spec = 2
		case strings.EqualFold(t, typ) && s == "*":
			spec = 1
		case t == "*" && s == "*":
			spec = 0
		}
		if spec > best {
			best, q = spec, qValue(params)
		}
	}
	return q, best
}

// qValue reads q= from a media range's parameters; 1 when absent, 0 when malformed.
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(q >= 0 && q <= 1) { // NaN too
			return 0
		}
		return q
	}
	return 1
}
