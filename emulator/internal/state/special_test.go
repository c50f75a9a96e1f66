package state

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

// FuzzSpecial holds special, the eight-bytes-at-a-time scan of str, to its byte-by-byte
// meaning: its lowest marked byte is the first quote, backslash, control character or
// byte of a multi-byte character of the word (none marked when there is none).
func FuzzSpecial(f *testing.F) {
	for _, s := range []string{"abcdefgh", "abc\"defg", "\\bcdefgh", "abcdefg\x1f", "abcdefg\x20", "abcdéfg", "\x00\x00\x00\x00\x00\x00\x00\x00", "!#[]~\x7f\x21\x5b", "ab\x80\x9fcdef", "a\xe2\x80\x94bcde"} {
		f.Add(binary.LittleEndian.Uint64([]byte(s)))
	}
	f.Fuzz(func(t *testing.T, w uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		want := 8
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				want = i
				break
			}
		}
		if got := bits.TrailingZeros64(special(w)) / 8; got != want {
			t.Fatalf("special(%q): first marked byte %d, want %d", b, got, want)
		}
	})
}
