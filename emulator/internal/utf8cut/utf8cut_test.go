package utf8cut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAt(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  int
	}{
		{"abc", 5, 3},                  // fits
		{"abc", 3, 3},                  // exactly
		{"abcdef", 4, 4},               // ASCII: at the bound
		{"aé", 2, 1},                   // é is 2 bytes: not split
		{"a€b", 3, 1},                  // € is 3 bytes
		{"😀x", 3, 0},                   // a 4-byte character from the start
		{"ab😀", 5, 2},                  // cut before it
		{"\x80\x80\x80\x80\x80", 4, 4}, // not UTF-8: at the byte
		{"", 0, 0},
	} {
		if got := At(tc.s, tc.limit); got != tc.want {
			t.Errorf("At(%q, %d) = %d, want %d", tc.s, tc.limit, got, tc.want)
		}
		if got := At([]byte(tc.s), tc.limit); got != tc.want {
			t.Errorf("At([]byte(%q), %d) = %d, want %d", tc.s, tc.limit, got, tc.want)
		}
	}
	// every cut of valid text is valid text, and as long as it can be
	s := strings.Repeat("aé€😀", 20)
	for limit := 0; limit <= len(s); limit++ {
		n := At(s, limit)
		if n > limit || !utf8.ValidString(s[:n]) || limit-n >= utf8.UTFMax {
			t.Fatalf("At(s, %d) = %d", limit, n)
		}
	}
}
