// Package utf8cut says where to cut text to a bound in bytes without splitting a UTF-8
// character: the journal's bodies and headers, messages that quote a client's text,
// hints that tell a client how much to send. One rule, so that each of them cuts alike.
package utf8cut

import "unicode/utf8"

// At is where to cut s to at most limit bytes: len(s) when it fits; else limit, or up
// to three bytes before it so as not to split a UTF-8 sequence. Text that is not UTF-8
// (no character starts in those bytes) is cut at limit itself, never further back.
func At[T string | []byte](s T, limit int) int {
	if len(s) <= limit {
		return len(s)
	}
	for i := limit; i > limit-utf8.UTFMax && i >= 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return limit
}
