package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sort"
)

// WriteJSON writes {"requests":[...]}, the entries f selects oldest first, as
// json.Marshal would, but entry by entry: the dump of a full journal costs a copy of the
// selected entries' headers (the strings are shared, never changed) and a small buffer,
// never the whole answer in memory. The selected entries are copied first (scan), then
// written, so writing to a slow client never holds the lock Add takes. When f has a
// condition and selects nothing, "near_misses" follows (NearMisses).
func (j *Journal) WriteJSON(w io.Writer, f Filter) error {
	entries := j.snapshot(f)
	bw := bufio.NewWriterSize(w, 32<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	bw.WriteString(`{"requests":[`)
	for i := range entries {
		if i > 0 {
			bw.WriteByte(',')
		}
		buf.Reset()
		if err := enc.Encode(&entries[i]); err != nil {
			return err
		}
		if _, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
			return err
		}
		entries[i] = Entry{} // let the strings go as soon as they are written
	}
	bw.WriteByte(']')
	if len(entries) == 0 { // nothing selected: what almost was
		if err := j.writeNearMisses(bw, f); err != nil {
			return err
		}
	}
	bw.WriteByte('}')
	return bw.Flush()
}

// snapshot copies the entries f selects, oldest first, at most f.Limit when set.
func (j *Journal) snapshot(f Filter) []Entry {
	out := []Entry{} // JSON [], not null
	j.scan(f.Since, func(e *Entry) bool {
		if f.matches(e) {
			out = append(out, *e)
		}
		return f.Limit == 0 || len(out) < f.Limit
	})
	return out
}

// scanChunk is how many entries scan copies under the lock at a time: the lock is held
// for that copy (a few microseconds), never while a filter looks at an entry.
const scanChunk = 256

// scan calls fn with a copy of each entry whose Seq is after since, oldest first,
// until fn returns false: each entry once, fn never under the lock. It sees the
// entries recorded before it began (those recorded meanwhile are left to the next
// scan), less any that dropped out of the ring or were cleared meanwhile; it stops at
// a Reset or Load. Every call of fn counts as one evaluation (Evaluations).
func (j *Journal) scan(since uint64, fn func(*Entry) bool) {
	j.mu.Lock()
	upto, epoch := j.seq, j.epoch
	j.mu.Unlock()
	j.scanEpoch(since, upto, epoch, fn)
}

// scanEpoch is scan of the entries after since up to upto, in the numbering of epoch.
func (j *Journal) scanEpoch(since, upto, epoch uint64, fn func(*Entry) bool) {
	var buf []Entry
	for since < upto {
		j.mu.Lock()
		if j.epoch != epoch {
			j.mu.Unlock()
			return
		}
		if buf == nil {
			buf = make([]Entry, 0, min(scanChunk, len(j.ring)))
		}
		for i := j.after(since); i < len(j.ring) && len(buf) < cap(buf); i++ {
			e := &j.ring[(j.head+i)%len(j.ring)]
			if e.Seq > upto {
				break
			}
			e.makeHeaders() // once, in the ring: every copy has them
			buf = append(buf, *e)
		}
		j.mu.Unlock()
		if len(buf) == 0 {
			return
		}
		n := 0
		for i := range buf {
			n++
			if !fn(&buf[i]) {
				j.evals.Add(uint64(n))
				return
			}
		}
		j.evals.Add(uint64(n))
		since = buf[len(buf)-1].Seq
		clear(buf) // let the strings go
		buf = buf[:0]
	}
}

// after is the index, counted from the oldest entry, of the first entry whose Seq is
// greater than seq (len(j.ring) when none is); j.mu is held. Seqs rise along the ring.
func (j *Journal) after(seq uint64) int {
	return sort.Search(len(j.ring), func(i int) bool { return j.ring[(j.head+i)%len(j.ring)].Seq > seq })
}

// Evaluations counts the entries queries, counts and awaits have evaluated a filter on
// since the journal was made: the work they did, which the tests of their bounds read.
func (j *Journal) Evaluations() uint64 { return j.evals.Load() }
