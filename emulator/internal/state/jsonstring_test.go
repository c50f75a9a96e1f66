package state

import (
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString holds AppendJSONString to encoding/json's Marshal of the same
// string, and AppendJSONEscaped of bytes (the decryption service's payload) to that of
// the same string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\b\f\x00\x1f", "<&>", "\u2028\u2029", "é日本\U0001F600", "\xff\xfe", "a\xe2\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendJSONEscaped([]byte("x"), []byte(s)), AppendJSONEscaped([]byte("x"), s); string(got) != string(want) {
			t.Fatalf("AppendJSONEscaped of bytes %q = %s, of the string %s", s, got, want)
		}
	})
}
