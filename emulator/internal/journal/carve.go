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
// order they were carved: what the carver holds beyond the entries' own bytes is the
// chunk being carved, the part of the oldest one its live entries do not use, and the
// tail of each chunk that the next entry's part did not fit in (carveChunkBytes and
// carveChunkHeaders each, at most twice, per journal, besides those tails; a journal
// of few entries, a namespace's, holds little: its first chunks are small, each twice
// the last up to those sizes). A request larger than carveMaxBytes (a long body) is
// allocated on its own, as before, so that no chunk is kept alive by one old entry's
// big copy.
//
// A chunk of headers is scanned whole by the collector, the slots of dropped entries
// too: the strings in every slot keep what they point into alive for as long as the
// chunk is. So a chunk of headers holds only strings of the chunk of bytes being carved
// when it was started (a new chunk of bytes starts a new chunk of headers), and an
// entry whose bytes are allocated on their own has its headers allocated on their own
// too: a chunk of headers alive keeps alive no bytes but those of its own chunk of
// bytes, which its live entries keep alive anyway.
type carver struct {
	mu sync.Mutex
	b  []byte   // the chunk of bytes being carved: len is what is handed out
	h  []Header // the chunk of headers being carved, pointing into b only
}

const (
	carveChunkBytes   = 4 << 10
	carveChunkHeaders = 128
	carveMaxBytes     = 512 // a request for more is allocated on its own
	carveFirstBytes   = 512 // a journal's first chunks are small, and double up to the above
	carveFirstHeaders = 16
)

// parts returns nb bytes and nh headers (one entry's) no one else holds, for own to
// copy the entry's strings into and to fill with headers made of those bytes alone,
// each part's capacity its length, so that appending to it never reaches another
// entry's part; nil headers when nh is 0. A nil carver allocates them, and so does a
// carver for more than carveMaxBytes bytes (both parts) or more than carveFirstHeaders
// headers (the headers).
func (c *carver) parts(nb, nh int) ([]byte, Headers) {
	if c == nil || nb > carveMaxBytes {
		return make([]byte, nb), ownHeaders(nh)
	}
	c.mu.Lock()
	if cap(c.b)-len(c.b) < nb {
		c.b = make([]byte, 0, min(max(2*cap(c.b), carveFirstBytes), carveChunkBytes))
		c.h = c.h[:cap(c.h)] // full: the next headers, pointing into the new chunk, start a new one
	}
	at := len(c.b)
	c.b = c.b[:at+nb]
	b := c.b[at : at+nb : at+nb]
	var h Headers
	switch {
	case nh > carveFirstHeaders:
		h = ownHeaders(nh)
	case nh > 0:
		if cap(c.h)-len(c.h) < nh {
			c.h = make([]Header, 0, min(max(2*cap(c.h), carveFirstHeaders), carveChunkHeaders))
		}
		at := len(c.h)
		c.h = c.h[:at+nh]
		h = c.h[at : at+nh : at+nh]
	}
	c.mu.Unlock()
	return b, h
}

// ownHeaders is n headers in an allocation of their own (nil for none).
func ownHeaders(n int) Headers {
	if n == 0 {
		return nil
	}
	return make(Headers, n)
}

// stringOf is b as a string, without a copy: b is a carved part no one writes again.
func stringOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
