// Package journal keeps the most recent requests the emulator answered, for
// GET /_emulator/requests and for awaiting a number of matching requests.
package journal

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// MaxBody is how many bytes of a request body an entry keeps.
const MaxBody = 4096

// DefaultSize is the number of entries kept when New is given none.
const DefaultSize = 1000

// Entry is one request as the journal records it. It never holds credentials: callers
// record no headers, and so no Authorization value, only the fields below.
type Entry struct {
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Query      string  `json:"query"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	// Body is the request body, cut to MaxBody bytes.
	Body      string    `json:"body"`
	ErrorCode string    `json:"error_code"`
	Scope     string    `json:"scope"`
	Service   string    `json:"service"`
	Time      time.Time `json:"time"`
	// BodyTruncated says Body was cut.
	BodyTruncated bool `json:"body_truncated,omitempty"`
}

// Filter selects entries. Empty fields select every entry.
type Filter struct {
	Method string // compared case-insensitively
	Path   string // `*` wildcards, as fault.PathMatch
}

func (f Filter) matches(e *Entry) bool {
	return (f.Method == "" || strings.EqualFold(f.Method, e.Method)) &&
		(f.Path == "" || fault.PathMatch(f.Path, e.Path))
}

// Journal is a bounded ring of the newest entries. It is safe for concurrent use.
type Journal struct {
	mu      sync.Mutex    // guards every field below
	size    int           // entries kept at most
	ring    []Entry       // grows to size, then wraps
	head    int           // index of the oldest entry once ring is full
	version uint64        // counts changes
	changed chan struct{} // closed at the next change; nil while nobody waits
}

// New returns an empty journal keeping the newest size entries (DefaultSize when size
// is 0 or less). Memory grows with the entries, not with size up front.
func New(size int) *Journal {
	if size <= 0 {
		size = DefaultSize
	}
	return &Journal{size: size, ring: make([]Entry, 0, min(size, 64))}
}

// Add records e, dropping the oldest entry when the journal is full. A body longer than
// MaxBody is cut to at most MaxBody bytes, on a UTF-8 boundary when it is text, and
// BodyTruncated set.
func (j *Journal) Add(e Entry) {
	if len(e.Body) > MaxBody {
		e.Body = strings.Clone(e.Body[:cut(e.Body)]) // do not keep the whole body alive
		e.BodyTruncated = true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.ring) < j.size {
		j.ring = append(j.ring, e)
	} else {
		j.ring[j.head] = e
		j.head = (j.head + 1) % j.size
	}
	j.changedLocked()
}

// cut is where to cut a body longer than MaxBody: MaxBody, or up to 3 bytes before so
// as not to split a UTF-8 sequence.
func cut(body string) int {
	for i := MaxBody; i > MaxBody-utf8.UTFMax; i-- {
		if utf8.RuneStart(body[i]) {
			return i
		}
	}
	return MaxBody // not UTF-8 text: cut at the byte
}

// List returns the entries f selects, oldest first.
func (j *Journal) List(f Filter) []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := []Entry{}
	j.each(func(e *Entry) {
		if f.matches(e) {
			out = append(out, *e)
		}
	})
	return out
}

// Count returns how many entries f selects.
func (j *Journal) Count(f Filter) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	j.each(func(e *Entry) {
		if f.matches(e) {
			n++
		}
	})
	return n
}

// each calls fn on every entry, oldest first; j.mu is held.
func (j *Journal) each(fn func(*Entry)) {
	for i := range j.ring {
		fn(&j.ring[(j.head+i)%len(j.ring)])
	}
}

// Clear forgets every entry, as DELETE /_emulator/requests and a reset do.
func (j *Journal) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	clear(j.ring) // let the entries' strings go
	j.ring, j.head = j.ring[:0], 0
	j.changedLocked()
}

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
		j.mu.Lock()
		v := j.version
		if v > after {
			j.mu.Unlock()
			return v
		}
		if j.changed == nil {
			j.changed = make(chan struct{})
		}
		ch := j.changed
		j.mu.Unlock()
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
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
}
