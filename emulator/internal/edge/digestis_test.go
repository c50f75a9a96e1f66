package edge

import "testing"

// TestDigestIs holds DigestIs, the upload's check without a string, to Digest.
func TestDigestIs(t *testing.T) {
	for _, data := range [][]byte{nil, {}, []byte("a"), make([]byte, 5000)} {
		d := Digest(data)
		if got, ok := DigestIs(data, d); !ok || got != "" {
			t.Fatalf("DigestIs(%d bytes, its digest) = %q, %v", len(data), got, ok)
		}
		for _, other := range []string{"", d[:63], d + "0", Digest([]byte("other"))} {
			if got, ok := DigestIs(data, other); ok || got != d {
				t.Fatalf("DigestIs(%d bytes, %q) = %q, %v; want %q, false", len(data), other, got, ok, d)
			}
		}
	}
}
