package journal

import (
	"bytes"
	"testing"
)

// TestCarverHandsOutDisjointParts: every carved part is its own (writing one never
// changes another), its capacity its length (an append reallocates rather than reach
// the next part), and a request over carveMaxBytes (both parts) or carveFirstHeaders
// (the headers) is allocated on its own, leaving the chunk as it was.
func TestCarverHandsOutDisjointParts(t *testing.T) {
	var c carver
	var parts [][]byte
	var hparts []Headers
	for i := range 3000 {
		n := 1 + (i*37)%carveMaxBytes
		hn := 1 + i%carveFirstHeaders
		p, h := c.parts(n, hn)
		if len(p) != n || cap(p) != n {
			t.Fatalf("parts(%d, %d): bytes len %d cap %d", n, hn, len(p), cap(p))
		}
		if len(h) != hn || cap(h) != hn {
			t.Fatalf("parts(%d, %d): headers len %d cap %d", n, hn, len(h), cap(h))
		}
		for k := range p {
			p[k] = byte(i)
		}
		parts = append(parts, p)
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
	_, a := c.parts(1, 2)
	_, b := c.parts(1, 2)
	b[0].Name = "next"
	_ = append(a, Header{Name: "appended"})
	if b[0].Name != "next" {
		t.Fatal("an append to one part reached the next")
	}
	// big requests go around the chunks: both parts for many bytes, the headers for
	// many headers
	used, hused := len(c.b), len(c.h)
	if p, h := c.parts(carveMaxBytes+1, 2); len(p) != carveMaxBytes+1 || len(h) != 2 || len(c.b) != used || len(c.h) != hused {
		t.Fatalf("a big request was carved: chunks at %d, %d, were %d, %d", len(c.b), len(c.h), used, hused)
	}
	if p, h := c.parts(1, carveFirstHeaders+1); len(p) != 1 || len(h) != carveFirstHeaders+1 || len(c.h) != hused {
		t.Fatalf("a big header request was carved: chunk at %d, was %d", len(c.h), hused)
	}
	if _, h := c.parts(1, 0); h != nil {
		t.Fatalf("no headers asked, %d given", len(h))
	}
	// a nil carver allocates
	var none *carver
	if p, h := none.parts(10, 3); len(p) != 10 || len(h) != 3 {
		t.Fatal("nil carver")
	}
}

// TestCarverStartsSmall: a journal of few entries (a namespace's) holds small chunks;
// each new one is twice the last, up to the chunk sizes. A new chunk of bytes starts a
// new chunk of headers (the headers carved point into one chunk of bytes only); a
// chunk of headers filled starts a new one alone.
func TestCarverStartsSmall(t *testing.T) {
	var c carver
	c.parts(10, 1)
	if cap(c.b) != carveFirstBytes || cap(c.h) != carveFirstHeaders {
		t.Fatalf("first chunks: %d bytes, %d headers", cap(c.b), cap(c.h))
	}
	want, hwant := carveFirstBytes, carveFirstHeaders
	for range 20 {
		for cap(c.b) > len(c.b) { // fill the chunk, then one byte more: new chunks
			c.parts(min(cap(c.b)-len(c.b), carveMaxBytes), 0)
		}
		c.parts(1, 1)
		want, hwant = min(2*want, carveChunkBytes), min(2*hwant, carveChunkHeaders)
		if cap(c.b) != want || cap(c.h) != hwant || len(c.h) != 1 {
			t.Fatalf("chunks %d bytes, %d headers (%d used); want %d, %d (1)", cap(c.b), cap(c.h), len(c.h), want, hwant)
		}
		b := &c.b[0]
		for cap(c.h) > len(c.h) { // fill the headers' chunk, then one more
			c.parts(0, min(cap(c.h)-len(c.h), carveFirstHeaders))
		}
		c.parts(0, 1)
		hwant = min(2*hwant, carveChunkHeaders)
		if &c.b[0] != b || cap(c.h) != hwant || len(c.h) != 1 {
			t.Fatalf("headers filled: %d headers (%d used), want %d (1); new bytes %v", cap(c.h), len(c.h), hwant, &c.b[0] != b)
		}
	}
}
