package journal

import (
	"bytes"
	"testing"
)

// TestCarverHandsOutDisjointParts: every carved part is its own (writing one never
// changes another), its capacity its length (an append reallocates rather than reach
// the next part), and a request over carveMaxBytes or carveFirstHeaders is allocated
// on its own, leaving the chunk as it was.
func TestCarverHandsOutDisjointParts(t *testing.T) {
	var c carver
	var parts [][]byte
	var hparts []Headers
	for i := range 3000 {
		n := 1 + (i*37)%carveMaxBytes
		p := c.bytes(n)
		if len(p) != n || cap(p) != n {
			t.Fatalf("bytes(%d): len %d cap %d", n, len(p), cap(p))
		}
		for k := range p {
			p[k] = byte(i)
		}
		parts = append(parts, p)
		hn := 1 + i%carveFirstHeaders
		h := c.headers(hn)
		if len(h) != hn || cap(h) != hn {
			t.Fatalf("headers(%d): len %d cap %d", hn, len(h), cap(h))
		}
		for k := range h {
			h[k] = Header{Name: "n", Value: string(rune('a' + i%26))}
		}
		hparts = append(hparts, h)
		if cap(c.b) > carveChunkBytes || cap(c.h) > carveChunkHeaders {
			t.Fatalf("a chunk over its size: %d bytes, %d headers", cap(c.b), cap(c.h))
		}
	}
	for i, p := range parts {
		if !bytes.Equal(p, bytes.Repeat([]byte{byte(i)}, len(p))) {
			t.Fatalf("part %d was written by another", i)
		}
		for _, h := range hparts[i] {
			if h.Value != string(rune('a'+i%26)) {
				t.Fatalf("headers %d were written by another", i)
			}
		}
	}
	// appending to a carved slice leaves the next part alone
	a, b := c.headers(2), c.headers(2)
	b[0].Name = "next"
	_ = append(a, Header{Name: "appended"})
	if b[0].Name != "next" {
		t.Fatal("an append to one part reached the next")
	}
	// big requests go around the chunks
	used, hused := len(c.b), len(c.h)
	if p := c.bytes(carveMaxBytes + 1); len(p) != carveMaxBytes+1 || len(c.b) != used {
		t.Fatalf("a big request was carved: chunk at %d, was %d", len(c.b), used)
	}
	if h := c.headers(carveFirstHeaders + 1); len(h) != carveFirstHeaders+1 || len(c.h) != hused {
		t.Fatalf("a big header request was carved: chunk at %d, was %d", len(c.h), hused)
	}
	// a nil carver allocates
	var none *carver
	if p := none.bytes(10); len(p) != 10 {
		t.Fatal("nil carver: bytes")
	}
	if h := none.headers(3); len(h) != 3 {
		t.Fatal("nil carver: headers")
	}
}

// TestCarverStartsSmall: a journal of few entries (a namespace's) holds small chunks;
// each new one is twice the last, up to the chunk sizes.
func TestCarverStartsSmall(t *testing.T) {
	var c carver
	c.bytes(10)
	c.headers(1)
	if cap(c.b) != carveFirstBytes || cap(c.h) != carveFirstHeaders {
		t.Fatalf("first chunks: %d bytes, %d headers", cap(c.b), cap(c.h))
	}
	want, hwant := carveFirstBytes, carveFirstHeaders
	for range 20 {
		for cap(c.b) > len(c.b) { // fill the chunk, then one byte more: a new chunk
			c.bytes(min(cap(c.b)-len(c.b), carveMaxBytes))
		}
		c.bytes(1)
		for cap(c.h) > len(c.h) {
			c.headers(min(cap(c.h)-len(c.h), carveFirstHeaders))
		}
		c.headers(1)
		want, hwant = min(2*want, carveChunkBytes), min(2*hwant, carveChunkHeaders)
		if cap(c.b) != want || cap(c.h) != hwant {
			t.Fatalf("chunks %d bytes, %d headers; want %d, %d", cap(c.b), cap(c.h), want, hwant)
		}
	}
}
