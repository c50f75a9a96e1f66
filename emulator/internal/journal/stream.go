package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes {"requests":[...]}, the entries f selects oldest first, as
// json.Marshal would, but entry by entry: the dump of a full journal costs a copy of its
// entries' headers (the strings are shared, never changed) and a small buffer, never the
// whole answer in memory. The copy is taken under the lock, so the dump is one
// consistent moment and writing to a slow client does not block Add.
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
	bw.WriteString(`]}`)
	return bw.Flush()
}

// snapshot copies the entries f selects, oldest first.
func (j *Journal) snapshot(f Filter) []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.countLocked(f)
	out := make([]Entry, 0, n)
	j.each(func(e *Entry) {
		if len(out) < n && f.matches(e) {
			out = append(out, *e)
		}
	})
	return out
}
