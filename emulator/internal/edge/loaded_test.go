package edge

import (
	"errors"
	"fmt"
	"testing"
)

// Load hashes a content once: the same bytes loaded again (a namespace's sites) are
// known, and anything else under that digest — other bytes, or a part of the same
// ones — is hashed and refused.
func TestLoadRemembersHashedContents(t *testing.T) {
	page := []byte("<h1>a site page</h1>")
	d := Digest(page)
	for range 2 {
		if err := NewFileStore(1 << 20).Load(map[string][]byte{d: page}); err != nil {
			t.Fatal(err)
		}
	}
	if got := loaded.m[d]; got.p != &page[0] || got.n != len(page) || got.etag != `"`+d+`"` {
		t.Fatalf("not remembered: %v", got)
	}
	other := []byte("<h1>a site page!</h1>")
	for _, b := range [][]byte{other, page[:len(page)-1], append([]byte(nil), page[:len(page)-1]...)} {
		if err := NewFileStore(1 << 20).Load(map[string][]byte{d: b}); !errors.Is(err, ErrDigestMismatch) {
			t.Fatalf("%q under the digest of %q: %v", b, page, err)
		}
	}
}

// The memory of hashed contents holds at most maxLoaded digests, whatever is loaded.
func TestLoadedMemoryBounded(t *testing.T) {
	files := map[string][]byte{}
	for i := range maxLoaded + 500 {
		b := []byte(fmt.Sprintf("content %d", i))
		files[Digest(b)] = b
	}
	if err := NewFileStore(1 << 30).Load(files); err != nil {
		t.Fatal(err)
	}
	loaded.Lock()
	n := len(loaded.m)
	loaded.Unlock()
	if n > maxLoaded {
		t.Fatalf("%d contents remembered, bound %d", n, maxLoaded)
	}
}
