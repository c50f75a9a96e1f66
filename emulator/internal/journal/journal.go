// Package journal keeps the most recent requests the emulator answered, for
// GET /_emulator/requests and for awaiting a number of matching requests.
package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/notify"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
)

// What an entry keeps of a request at most, in bytes. Longer values are cut (on a UTF-8
// boundary when they are text) and, for body, path and query, flagged as truncated, so
// that no client can make an entry hold more than MaxEntryBytes.
const (
	MaxBody  = 4096 // request body
	MaxPath  = 2048 // URL path
	MaxQuery = 2048 // raw query
	MaxName  = 64   // method, error code, scope, service and fault id: cut silently
	MaxHost  = 256  // the edge's host (a DNS name is at most 253): cut silently
)

// entryOverhead bounds an Entry's own size (its fixed fields and string headers).
const entryOverhead = int64(unsafe.Sizeof(Entry{}))

// MaxEntryBytes bounds the memory one entry holds: its capped strings, its answer's
// and itself. A journal of n entries holds at most n × MaxEntryBytes (about 17.3 KiB
// each).
const MaxEntryBytes = MaxBody + MaxPath + MaxQuery + 5*MaxName + MaxHost + headersBytes + MaxBody + answerHeadersBytes + entryOverhead

// DefaultSize is the number of entries kept when New is given none.
const DefaultSize = 1000

// Entry is one request as the journal records it. It never holds credentials: the
// values of Authorization, Proxy-Authorization and Cookie are Redacted.
type Entry struct {
	// Seq numbers the entries of a journal from 1, in the order recorded; it goes on
	// across DELETE /_emulator/requests and restarts at a reset. Filter.Since asks for
	// the entries after one.
	Seq        uint64  `json:"seq"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Query      string  `json:"query"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	// Body is the request body, cut to MaxBody bytes.
	Body      string `json:"body"`
	ErrorCode string `json:"error_code"`
	Scope     string `json:"scope"`
	Service   string `json:"service"`
	Host      string `json:"host,omitempty"` // the host an edge request was for
	// FaultID is the injected fault that fired on the request, if one did.
	FaultID string `json:"fault_id,omitempty"`
	// Headers are the request's headers (HeadersOf), at most MaxHeaders bytes.
	Headers Headers   `json:"headers,omitempty"`
	Time    time.Time `json:"time"`
	// BodyTruncated says Body was cut.
	BodyTruncated bool `json:"body_truncated,omitempty"`
	// BodyUnread says the request was answered before its body was read, and the body
	// was never asked for: the client sent Expect: 100-continue and was refused, so
	// it never sent the body. Body is then "".
	BodyUnread bool `json:"body_unread,omitempty"`
	// PathTruncated and QueryTruncated say Path (MaxPath) or Query (MaxQuery) was cut.
	PathTruncated  bool `json:"path_truncated,omitempty"`
	QueryTruncated bool `json:"query_truncated,omitempty"`
	// HeadersTruncated says Headers were cut.
	HeadersTruncated bool `json:"headers_truncated,omitempty"`
	// Replayed marks an entry that came with a failure bundle: recorded by the world the
	// bundle was taken from, not answered here.
	Replayed bool `json:"replayed,omitempty"`
	// kept says which bodies were given as strings never changed, whole, that the entry
	// may keep as they are (SetKeptBody, SetSharedResponse), and whether the answer's
	// headers were given as sent (SetAnswerHead); beside the other flags, in their
	// padding: an entry is no larger (MaxEntryBytes)
	kept keptBodies
	// Response is the answer, when there was one (none for a request a fault dropped
	// or timed out).
	Response Response `json:"response,omitzero"`

	// raw are request headers given by SetRequestHeaders, made into Headers by Add.
	raw http.Header
	// rawAnswer and rawAnswerBody are the answer given by SetResponse, made into
	// Response by Add.
	rawAnswer     http.Header
	rawAnswerBody []byte
	// tokenSum is the fingerprint of the request's bearer token (SetToken), for near
	// misses: the token itself is never kept.
	tokenSum uint64
}

// Response is what the journal keeps of an answer: its status, the headers a client
// acts on (AnswerHeader) and the first MaxBody bytes of its body as the handler wrote
// it (before any gzip), redacted where the request's body is.
type Response struct {
	Status int `json:"status"`
	// Headers are the answer's Content-Type, Location, Retry-After and X-RateLimit-*
	// headers, at most MaxAnswerHeaders bytes.
	Headers Headers `json:"headers,omitempty"`
	Body    string  `json:"body"`
	// BodyTruncated says Body was cut at MaxBody; HeadersTruncated that Headers were.
	BodyTruncated    bool `json:"body_truncated,omitempty"`
	HeadersTruncated bool `json:"headers_truncated,omitempty"`
}

// keptBodies is a set of an entry's bodies that own keeps as they are, not copied.
type keptBodies uint8

const (
	keptRequest keptBodies = 1 << iota // Body (SetKeptBody)
	keptAnswer                         // Response.Body (SetSharedResponse)
	// Response.Headers are an AnswerHead's (SetAnswerHead): picked and sorted already,
	// their strings still to be copied; keptConstNames: their names are keptNames'
	// constants, kept as they are
	keptHead
	keptConstNames
	// the request's headers are raw, a served request's map kept as it is, to be made
	// into Headers when the entry is first read (SetServedRequestHeaders, makeHeaders)
	keptLazyHeaders
)

// keepIf is k with b when body is whole (at most MaxBody bytes): a longer one is cut
// and copied as any other.
func (k keptBodies) keepIf(b keptBodies, body string) keptBodies {
	if len(body) <= MaxBody {
		return k | b
	}
	return k &^ b
}

// SetRequestHeaders gives e a request's headers: Add keeps them as HeadersOf would,
// within the bounds, in the one copy it makes of the entry's strings (cheaper than
// setting Headers to HeadersOf(h) on the hot path).
func (e *Entry) SetRequestHeaders(h http.Header) { e.raw, e.kept = h, e.kept&^keptLazyHeaders }

// SetServedRequestHeaders is SetRequestHeaders for the header map of a request that
// came in through hostemu's own listeners: net/http made it for that request alone,
// and nothing reads or writes it once the request is recorded. When the map is small
// enough to stand in the entry for the Headers made of it (keepable: MaxEntryBytes
// holds), the journal keeps the map itself and makes the Headers (walked, sorted,
// redacted, cut, copied: what Add makes of them) only when the entry is first read:
// List, a count, an await, a near miss, a bundle; every reader sees what Add would
// have made, and Bytes counts it. It spares the request path the sort and the copy.
// So that the entry holds no credential, the values of h's Authorization,
// Proxy-Authorization and Cookie are then replaced in h by Redacted (what the entry
// shows of them anyway; net/http's own slice of the head's values, out of every
// reader's reach, may still hold them): read the bearer token (SetToken) first. h must
// not be read for its credentials, nor written, after this. host is the request's
// Host, which h's memory may hold still (keepable).
func (e *Entry) SetServedRequestHeaders(h http.Header, host string) {
	e.SetRequestHeaders(h)
	var creds [4]string
	n, ok := keepable(h, host, &creds)
	if !ok {
		return
	}
	for _, name := range creds[:n] {
		h[name] = redactedValues
	}
	e.kept |= keptLazyHeaders
}

// SetKeptBody gives e the request's whole body as a string that is never changed and
// holds no more memory than a copy would (an upload's own buffer): Add keeps it as it
// is rather than copying it with the entry's other strings. A body over MaxBody is
// cut and copied as any other.
func (e *Entry) SetKeptBody(body string) { e.Body, e.kept = body, e.kept.keepIf(keptRequest, body) }

// SetResponse gives e its answer: the status, the answer's headers (of which Add keeps
// those AnswerHeader names) and the body as written, of which Add keeps the first
// MaxBody bytes (so body need hold no more than MaxBody+1 to tell a cut). Add copies
// what it keeps in the one copy it makes of the entry's strings: body may be a buffer
// reused once Add returns.
func (e *Entry) SetResponse(status int, h http.Header, body []byte) {
	e.Response.Status, e.rawAnswer, e.rawAnswerBody = status, h, body
}

// SetSharedResponse is SetResponse for a body that is never modified and may live as
// long as the entry (a rendered answer kept for many requests): Add keeps it as it
// is, without a copy, when it is at most MaxBody bytes (else it cuts and copies it as
// SetResponse's). The entry then shares it; it holds no more than a copy would.
func (e *Entry) SetSharedResponse(status int, h http.Header, body string) {
	e.Response.Status, e.rawAnswer, e.Response.Body, e.kept = status, h, body, e.kept.keepIf(keptAnswer, body)
}

// SetAnswerHead gives e its answer's headers as they were sent (h, taken when the
// answer's head went out), in place of those SetResponse or SetSharedResponse would
// take from their map when the entry is added: a header a handler set after the head
// was sent is not listed. h must stay unchanged until Add returns; Add copies what it
// keeps.
func (e *Entry) SetAnswerHead(h *AnswerHead) {
	r := &e.Response
	r.Headers, r.HeadersTruncated = h.buf[:h.n], r.HeadersTruncated || h.cut
	e.rawAnswer = nil
	e.kept |= keptHead
	if h.constNames {
		e.kept |= keptConstNames
	}
}

// Journal is a bounded ring of the newest entries. It is safe for concurrent use.
//
// Its lock is held to add an entry or to copy a few (scan), never while a filter looks
// at one: queries and awaits evaluate their filters on copies, so a costly filter (a
// body match decodes JSON) slows its own caller, not the requests being journaled.
type Journal struct {
	mu      sync.Mutex    // guards every field below but evals
	size    int           // entries kept at most
	ring    []Entry       // grows to size, then wraps
	head    int           // index of the oldest entry once ring is full
	version uint64        // counts changes
	seq     uint64        // Seq of the newest entry
	epoch   uint64        // counts renumberings (Reset, Load): a Tally starts afresh
	changed notify.Signal // a change was journaled

	evals atomic.Uint64 // entries a filter was evaluated on (Evaluations)
}

// New returns an empty journal keeping the newest size entries (DefaultSize when size
// is 0 or less). Memory grows with the entries, not with size up front.
func New(size int) *Journal {
	if size <= 0 {
		size = DefaultSize
	}
	return &Journal{size: size, ring: make([]Entry, 0, min(size, 8))}
}

// Add records e, dropping the oldest entry when the journal is full, and returns the
// Seq it gave it. Body, Path and
// Query longer than their caps are cut, on a UTF-8 boundary when they are text, and
// flagged; the other strings are cut at MaxName. Every string is copied: a request's
// fields share memory with its whole request line, which must not stay alive.
func (j *Journal) Add(e Entry) uint64 { return j.Record(e).Seq }

// Record is Add returning the entry as the journal keeps it: its Seq set, its strings
// cut and copied, its headers and answer made from SetRequestHeaders and SetResponse.
func (j *Journal) Record(e Entry) Entry {
	e.kept &^= keptLazyHeaders // the entry given back has its Headers made
	j.RecordTo(&e)
	return e
}

// RecordTo is Record in place: *e becomes the entry as the journal keeps it (the
// request path's way, which spares the hot path two copies of an Entry), but for
// request headers given by SetServedRequestHeaders and kept to be made when read:
// *e has none of them then (Headers nil, HeadersTruncated as given), and the
// journal's entry has them.
func (j *Journal) RecordTo(e *Entry) {
	e.own()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	e.Seq = j.seq
	switch {
	case len(j.ring) < j.size:
		if len(j.ring) == cap(j.ring) { // grow by doubling, but never past size
			j.ring = append(make([]Entry, 0, min(2*cap(j.ring), j.size)), j.ring...)
		}
		j.ring = append(j.ring, *e)
	default:
		j.ring[j.head] = *e
		j.head = (j.head + 1) % j.size
	}
	e.raw, e.kept = nil, 0 // the caller's copy keeps no map
	j.changedLocked()
}

// clip returns a copy of s cut to at most limit bytes, and whether it was cut (or
// already was).
func clip(s string, limit int, truncated bool) (string, bool) {
	if len(s) <= limit {
		return strings.Clone(s), truncated
	}
	return strings.Clone(s[:utf8cut.At(s, limit)]), true
}

// method returns m without sharing its memory: the common methods as constants.
func method(m string) string {
	switch m {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "HEAD":
		return "HEAD"
	case "OPTIONS":
		return "OPTIONS"
	}
	m, _ = clip(m, MaxName, false)
	return m
}

// List returns the entries f selects, oldest first, at most f.Limit when set.
func (j *Journal) List(f Filter) []Entry { return j.snapshot(f) }

// Count returns how many entries f selects (f.Limit aside).
func (j *Journal) Count(f Filter) int {
	n := 0
	j.scan(f.Since, func(e *Entry) bool {
		if f.matches(e) {
			n++
		}
		return true
	})
	return n
}

// Codes are the distinct error codes of the entries held, in no order.
func (j *Journal) Codes() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var codes apperr.CodeSet
	j.each(func(e *Entry) { codes.Add(e.ErrorCode) })
	return codes.List()
}

// each calls fn on every entry, oldest first; j.mu is held.
func (j *Journal) each(fn func(*Entry)) {
	for i := range j.ring {
		fn(&j.ring[(j.head+i)%len(j.ring)])
	}
}

// Clear forgets every entry, as DELETE /_emulator/requests does; the sequence goes on,
// so that a Since read before still selects what comes after.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.clearLocked()
}

// Reset forgets every entry and restarts the sequence at 1, as a reset does.
func (j *Journal) Reset() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.clearLocked()
	j.seq = 0
	j.epoch++
}

func (j *Journal) clearLocked() {
	clear(j.ring) // let the entries' strings go
	j.ring, j.head = j.ring[:0], 0
	j.changedLocked()
}

// Bytes returns the memory the entries hold: their strings and themselves; an entry
// not yet read that kept its request's header map (SetServedRequestHeaders) is counted
// with the Headers the map will make, though it holds the map (within what
// MaxEntryBytes allows the Headers, keepable). It is at most MaxBytes.
func (j *Journal) Bytes() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	j.each(func(e *Entry) { n += e.Bytes() })
	return n
}

// Bytes is the memory e holds once kept: its strings and itself (at most
// MaxEntryBytes once kept, its fields cut to their bounds).
//
// Of request headers still to be made (SetServedRequestHeaders), it counts the
// Headers they will be, as the entry read shows them.
func (e *Entry) Bytes() int64 {
	headers := e.Headers.bytes()
	if e.kept&keptLazyHeaders != 0 {
		headers = lazyHeadersBytes(e.raw)
	}
	return entryOverhead + int64(len(e.Method)+len(e.Path)+len(e.Query)+len(e.Body)+len(e.ErrorCode)+len(e.Scope)+len(e.Service)+len(e.Host)+len(e.FaultID)) + headers +
		int64(len(e.Response.Body)) + e.Response.Headers.bytes()
}

// MaxBytes is the most memory the entries can hold: size × MaxEntryBytes.
func (j *Journal) MaxBytes() int64 { return int64(j.size) * MaxEntryBytes }

// Len returns the number of entries held.
func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.ring)
}

// Version counts the changes (adds and clears) since the journal was made. Read it,
// check a condition, and Wait with it to be woken at the next change.
func (j *Journal) Version() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.version
}

// Wait blocks until the version is past after or ctx ends, and returns the version
// then. An await checks its condition, and if it does not hold yet, waits with the
// version it read before checking, so that no change between the two is missed.
func (j *Journal) Wait(ctx context.Context, after uint64) uint64 {
	for {
		ch := j.changed.Next()
		if v := j.Version(); v > after {
			return v
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return j.Version()
		}
	}
}

// changedLocked counts a change and wakes the waiters; j.mu is held.
func (j *Journal) changedLocked() {
	j.version++
	j.changed.Notify()
}

// MarshalJSON writes the entry with its time as every time hostemu writes one: RFC 3339
// UTC with three fractional digits.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	return json.Marshal(struct {
		plain
		Time state.Timestamp `json:"time"`
	}{plain(e), state.Timestamp(e.Time)})
}

// Load replaces the entries with entries (oldest first, as List gives them), each
// marked Replayed and held to the same bounds as a recorded one; the sequence goes on
// from the last one's Seq. Only the newest entries the journal keeps are kept. Seqs
// must rise strictly: an error changes nothing.
func (j *Journal) Load(entries []Entry) error {
	if err := Check(entries); err != nil {
		return err
	}
	if len(entries) > j.size {
		entries = entries[len(entries)-j.size:]
	}
	ring := make([]Entry, len(entries), max(len(entries), min(j.size, 64)))
	for i, e := range entries {
		e.raw, e.rawAnswer, e.rawAnswerBody, e.kept = nil, nil, nil, 0
		e.own()
		e.Replayed = true
		ring[i] = e
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.ring)
	j.ring, j.head = ring, 0
	if n := len(ring); n > 0 {
		j.seq = ring[n-1].Seq
	}
	j.epoch++
	j.changedLocked()
	return nil
}

// Check reports what Load would refuse in entries: seqs that do not rise strictly from
// 1 or more.
func Check(entries []Entry) error {
	for i, e := range entries {
		if e.Seq == 0 {
			return fmt.Errorf("entry %d: seq 0 (entries are numbered from 1)", i+1)
		}
		if i > 0 && e.Seq <= entries[i-1].Seq {
			return fmt.Errorf("entry %d: seq %d does not follow %d", i+1, e.Seq, entries[i-1].Seq)
		}
	}
	return nil
}

// Size is how many entries the journal keeps at most.
func (j *Journal) Size() int { return j.size }
