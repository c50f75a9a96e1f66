package journal

import (
	"net/http"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
)

// own cuts e's strings to their caps (Body, Path and Query flagged when cut, on a UTF-8
// boundary when they are text; the names cut silently at MaxName, the host at MaxHost;
// the headers at MaxHeaders bytes and maxHeaderCount headers; the answer's body at
// MaxBody and its headers at MaxAnswerHeaders bytes) and copies what is kept into one
// allocation, and the request's and the answer's headers into one slice: a request's
// strings share memory with its whole request, which must not stay alive, an answer's
// body is a buffer the caller reuses, and one copy costs less than one per field on the
// hot path.
//
// Its buffers are on the stack, sized for the usual request (a few headers) unless
// this one has more: zeroing and copying buffers for 32 headers was a good part of an
// entry's cost.
func (e *Entry) own() {
	// bodies never modified, whole (SetKeptBody, SetSharedResponse): kept as they are,
	// out of the copy (set aside here, without a deferred call, and put back after)
	kept := e.kept
	e.kept = 0
	body, answer := e.Body, e.Response.Body
	if kept&keptRequest != 0 {
		e.Body = ""
	}
	if kept&keptAnswer != 0 {
		e.Response.Body = ""
	}
	n := len(e.Headers)
	if e.raw != nil && kept&keptLazyHeaders == 0 {
		n = len(e.raw)
	}
	if n > smallHeaderCount {
		var buf [maxHeaderCount]Header
		var spans [maxHeaderCount]span
		e.ownWith(kept, buf[:], spans[:])
	} else {
		var buf [smallHeaderCount]Header
		var spans [smallHeaderCount]span
		e.ownWith(kept, buf[:], spans[:])
	}
	if kept&keptRequest != 0 {
		e.Body = body
	}
	if kept&keptAnswer != 0 {
		e.Response.Body = answer
	}
	e.kept = kept & keptLazyHeaders // the one mark a kept entry keeps: its map, made when read
}

// smallHeaderCount is how many request headers own's small buffers hold.
const smallHeaderCount = 8

// ownWith is own with buf for the request's headers (as many as it has, up to
// maxHeaderCount) and spans for what is kept of them; kept is what the entry's kept
// said (its kept bodies already set aside).
func (e *Entry) ownWith(kept keptBodies, buf []Header, spans []span) {
	e.Method = method(e.Method)
	e.Path, e.PathTruncated = cutTo(e.Path, MaxPath, e.PathTruncated)
	e.Query, e.QueryTruncated = cutTo(e.Query, MaxQuery, e.QueryTruncated)
	e.Body, e.BodyTruncated = cutTo(e.Body, MaxBody, e.BodyTruncated)
	e.Host, _ = cutTo(e.Host, MaxHost, false)
	r := &e.Response
	r.Body, r.BodyTruncated = cutTo(r.Body, MaxBody, r.BodyTruncated)
	fields := [...]*string{&e.Path, &e.Query, &e.Body, &e.Host, &r.Body, &e.ErrorCode, &e.Scope, &e.Service, &e.FaultID}
	for _, f := range fields[5:] {
		*f, _ = cutTo(*f, MaxName, false)
	}
	answerBody := e.rawAnswerBody
	if answerBody != nil {
		if len(answerBody) > MaxBody {
			answerBody, r.BodyTruncated = answerBody[:utf8cut.At(answerBody, MaxBody)], true
		}
		r.Body = ""
	}
	src := e.Headers
	lazy := kept&keptLazyHeaders != 0
	switch {
	case lazy: // made when read (makeHeaders)
		src = nil
	case e.raw != nil:
		src = rawHeaders(e.raw, buf)
	}
	n, hcut := headerSpans(src, MaxHeaders, spans)
	e.HeadersTruncated = e.HeadersTruncated || hcut
	var aspans [maxAnswerHeaderCount]span
	var asrc Headers
	var many, constNames bool
	if kept&keptHead != 0 { // taken as sent (SetAnswerHead): picked and sorted already
		asrc, constNames = r.Headers, kept&keptConstNames != 0
	} else {
		var abuf [maxAnswerHeaderCount]Header // zeroed only on this path
		asrc, many, constNames = answerHeaders(r.Headers, e.rawAnswer, &abuf)
	}
	an, acut := headerSpans(asrc, MaxAnswerHeaders, aspans[:])
	r.HeadersTruncated = r.HeadersTruncated || many || acut
	if !lazy {
		e.raw = nil
	}
	e.rawAnswer, e.rawAnswerBody = nil, nil
	total := len(answerBody)
	for _, f := range fields {
		total += len(*f)
	}
	for _, sp := range spans[:n] {
		total += sp.name + sp.value
	}
	for _, sp := range aspans[:an] {
		total += sp.value
		if !constNames {
			total += sp.name
		}
	}
	e.Headers, r.Headers = nil, nil
	if total == 0 && n+an == 0 {
		return
	}
	dst, out := make([]byte, total), make(Headers, n+an)
	w := 0
	for _, f := range fields {
		w += copy(dst[w:], *f)
	}
	w += copy(dst[w:], answerBody)
	w = putSpans(dst, w, src, spans[:n], true)
	w = putSpans(dst, w, asrc, aspans[:an], !constNames) // constant names are kept as they are
	all, at := stringOf(dst[:w]), 0
	take := func(n int) string { s := all[at : at+n]; at += n; return s }
	for _, f := range fields {
		*f = take(len(*f))
	}
	if answerBody != nil {
		r.Body = take(len(answerBody))
	}
	if n+an == 0 {
		return
	}
	at = takeSpans(out[:n], all, at, src, spans[:n], true)
	takeSpans(out[n:], all, at, asrc, aspans[:an], !constNames)
	if n > 0 {
		e.Headers = out[:n:n]
	}
	if an > 0 {
		r.Headers = out[n:]
	}
}

// cutTo is s cut to at most limit bytes (on a UTF-8 boundary), and whether it was cut
// (or already was); it shares s's memory.
func cutTo(s string, limit int, truncated bool) (string, bool) {
	if len(s) <= limit {
		return s, truncated
	}
	return s[:utf8cut.At(s, limit)], true
}

// span is how much of one header is kept: bytes of its name and of its value.
type span struct{ name, value int }

// headerSpans says what is kept of h, into spans[:n]: at most maxHeaderCount headers
// (and len(spans), which must hold as many of h as that allows) and limit bytes of
// names and values; cut reports that something was left out.
func headerSpans(h Headers, limit int, spans []span) (n int, cut bool) {
	left := limit
	for _, x := range h {
		if n == maxHeaderCount || len(x.Name) >= left {
			return n, true
		}
		name := utf8cut.At(x.Name, left)
		left -= name
		value := utf8cut.At(x.Value, left)
		left -= value
		spans[n] = span{name, value}
		n++
		if value < len(x.Value) {
			return n, true
		}
	}
	return n, false
}

// rawHeaders is HeadersOf(h) without its allocation for the common request (at most
// len(buf) headers, each with one value): buf holds it, sharing h's strings, for own
// to copy what it keeps.
func rawHeaders(h http.Header, buf []Header) Headers {
	if len(h) > len(buf) {
		return HeadersOf(h)
	}
	n := 0
	for name, vals := range h {
		if len(vals) != 1 {
			return HeadersOf(h)
		}
		buf[n] = Header{Name: name, Value: headerValue(name, vals)}
		n++
	}
	out := buf[:n]
	for i := 1; i < n; i++ { // insertion sort: a request has a handful of headers
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// makeHeaders makes the request's Headers of an entry that kept its map
// (SetServedRequestHeaders): what own makes of them, in an allocation of their own,
// and lets the map go. The journal calls it under its lock, on the entry in the ring,
// before any reader sees the entry.
func (e *Entry) makeHeaders() {
	if e.kept&keptLazyHeaders == 0 {
		return
	}
	h := e.raw
	e.raw, e.kept = nil, e.kept&^keptLazyHeaders
	var buf [maxHeaderCount]Header
	var spans [maxHeaderCount]span
	src := rawHeaders(h, buf[:])
	n, cut := headerSpans(src, MaxHeaders, spans[:])
	e.HeadersTruncated = e.HeadersTruncated || cut
	if n == 0 {
		return
	}
	total := 0
	for _, sp := range spans[:n] {
		total += sp.name + sp.value
	}
	dst, out := make([]byte, total), make(Headers, n)
	all := stringOf(dst[:putSpans(dst, 0, src, spans[:n], true)])
	takeSpans(out, all, 0, src, spans[:n], true)
	e.Headers = out
}

// putSpans copies what spans keep of src's headers into dst from w (their names too
// when names), for own and makeHeaders, and returns where the copy ends.
func putSpans(dst []byte, w int, src Headers, spans []span, names bool) int {
	for i, sp := range spans {
		if names {
			w += copy(dst[w:], src[i].Name[:sp.name])
		}
		w += copy(dst[w:], src[i].Value[:sp.value])
	}
	return w
}

// takeSpans fills out with the headers putSpans wrote into all from at, and returns
// where they end; without names, each keeps src's name (a constant, never cut: a name
// is cut only where the header is left out).
func takeSpans(out Headers, all string, at int, src Headers, spans []span, names bool) int {
	for i, sp := range spans {
		name := src[i].Name
		if names {
			name, at = all[at:at+sp.name], at+sp.name
		}
		out[i] = Header{Name: name, Value: all[at : at+sp.value]}
		at += sp.value
	}
	return at
}

// lazyHeadersBytes is what the Headers made of h (makeHeaders) hold, counted as
// Headers.bytes counts them, without making them.
func lazyHeadersBytes(h http.Header) int64 {
	var buf [maxHeaderCount]Header
	var spans [maxHeaderCount]span
	src := rawHeaders(h, buf[:])
	n, _ := headerSpans(src, MaxHeaders, spans[:])
	total := int64(n) * int64(unsafe.Sizeof(Header{}))
	for _, sp := range spans[:n] {
		total += int64(sp.name + sp.value)
	}
	return total
}

// keepable reports whether an entry may keep the header map h, of a request to host,
// in place of the Headers made of it: at most maxHeaderCount headers, and the memory
// the map holds on to, counted without a sort or a copy, within what MaxEntryBytes
// allows the Headers (headersBytes). That memory is over-counted as net/textproto
// makes the map of an HTTP/1 request (an HTTP/2 one's holds less): it sizes the map,
// and one slice shared by every header's first value, for every line of the head, the
// Host line included (taken out of the map, its value still held by that slice) and
// one more (a line net/http takes out too); the map is a header and groups of eight
// slots of a name and a slice (8 control bytes + 8 × 40), as many as keep them at
// most 7/8 full, in a power of two; a header of several values has a slice of its own
// besides; each string is an allocation of its own (allocated).
// It gives the names of h's credentials (credential: at most len(creds) of them, or h
// is not keepable), whose values the entry must not hold.
func keepable(h http.Header, host string, creds *[4]string) (n int, ok bool) {
	if len(h) > maxHeaderCount {
		return 0, false
	}
	const mapHeader, group, elem = 128, 8 + 8*(16+24), int64(unsafe.Sizeof(""))
	lines := int64(2)                        // the Host line, and one more
	size := mapHeader + allocated(len(host)) // held by the shared slice
	for name, vals := range h {
		lines += int64(len(vals))
		if cap(vals) > 1 {
			size += allocated(cap(vals) * int(elem))
		}
		size += allocated(len(name))
		for _, v := range vals {
			size += allocated(len(v))
		}
		if size+lines*elem > headersBytes {
			return 0, false
		}
		if credential(name) {
			if n == len(creds) {
				return 0, false
			}
			creds[n] = name
			n++
		}
	}
	groups := int64(1)
	for groups*7 < lines {
		groups *= 2
	}
	if size+allocated(int(lines*elem))+allocated(int(groups*group)) > headersBytes {
		return 0, false
	}
	return n, true
}

// allocated is at least the memory an allocation of n bytes takes: Go rounds one up to
// its size class, by at most a quarter of it (tiny ones to 16 bytes).
func allocated(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64(n + n/4 + 16)
}

// redactedValues is the value a kept map's credential is given (SetServedRequestHeaders):
// one slice for every map, of capacity 1, so that an append copies it.
var redactedValues = []string{Redacted}[:1:1]

// stringOf is b as a string, without a copy: b is an entry's copy no one writes again.
// (Both copies, the strings' and the headers', are allocations of their own: a carver
// that cut them from per-journal chunks was tried and taken out, no faster in process
// and within the noise in the binary; docs/performance.md, "The GET chain, sixth
// pass".)
func stringOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
