package journal

import (
	"sync"
	"unsafe"
)

// carver hands out the memory an entry's strings and header slices are copied into
// (own) from chunks it allocates now and then, where each entry used to allocate two
// objects of its own (a string holding its fields and a slice of its headers) on every
// request. A chunk's carved parts are written once, before the entry that holds them
// is in the journal, and never again, so the strings made of them never change; a
// chunk stays alive while any entry (in the ring, or a copy a reader holds) points
// into it. The journal drops its oldest entries first, so chunks are let go in the
// order they were carved: what the carver holds beyond the entries' own bytes is at
// most the chunk being carved and the part of the oldest one its live entries do not
// use (carveChunkBytes and carveChunkHeaders each, at most twice, per journal; a
// journal of few entries, a namespace's, holds little: its first chunks are small, each
// twice the last up to those sizes). A
// request larger than carveMaxBytes (a long body) is allocated on its own, as before,
// so that no chunk is kept alive by one old entry's big copy.
type carver struct {
	mu sync.Mutex
	b  []byte   // the chunk of bytes being carved: len is what is handed out
	h  []Header // the chunk of headers being carved
}

const (
	carveChunkBytes   = 4 << 10
	carveChunkHeaders = 128
	carveMaxBytes     = 512 // a request for more is allocated on its own
	carveFirstBytes   = 512 // a journal's first chunks are small, and double up to the above
	carveFirstHeaders = 16
)

// bytes returns n bytes (n > 0) no one else holds, for own to copy an entry's
// strings into; a nil carver allocates them.
func (c *carver) bytes(n int) []byte {
	if c == nil || n > carveMaxBytes {
		return make([]byte, n)
	}
	c.mu.Lock()
	if cap(c.b)-len(c.b) < n {
		c.b = make([]byte, 0, min(max(2*cap(c.b), carveFirstBytes), carveChunkBytes))
	}
	at := len(c.b)
	c.b = c.b[:at+n]
	p := c.b[at : at+n : at+n]
	c.mu.Unlock()
	return p
}

// headers returns a slice of n headers (n > 0) no one else holds, its capacity n, so
// that appending to it never reaches another entry's; a nil carver allocates it.
func (c *carver) headers(n int) Headers {
	if c == nil || n > carveFirstHeaders {
		return make(Headers, n)
	}
	c.mu.Lock()
	if cap(c.h)-len(c.h) < n {
		c.h = make([]Header, 0, min(max(2*cap(c.h), carveFirstHeaders), carveChunkHeaders))
	}
	at := len(c.h)
	c.h = c.h[:at+n]
	p := c.h[at : at+n : at+n]
	c.mu.Unlock()
	return p
}

// stringOf is b as a string, without a copy: b is a carved part no one writes again.
func stringOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
