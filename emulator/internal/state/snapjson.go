package state

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteSnapshot writes snap as json.Marshal would, element by element: the export of
// a large world costs the snapshot and a small buffer, never its whole JSON text. head,
// when not empty, is written first inside the object (a `"field":value,` of the
// caller's, such as the --state file's log_seq).
func WriteSnapshot(w io.Writer, snap *Snapshot, head string) error {
	sw := &snapWriter{w: w}
	sw.enc = json.NewEncoder(&sw.buf)
	sw.raw("{" + head + `"tokens":`)
	writeArray(sw, snap.Tokens)
	sw.raw(`,"policy":`)
	sw.value(&snap.Policy)
	sw.raw(`,"cipher":`)
	sw.value(&snap.Cipher)
	sw.raw(`,"projects":`)
	writeArray(sw, snap.Projects)
	sw.raw(`,"deployments":`)
	writeArray(sw, snap.Deployments)
	sw.raw(`,"domains":`)
	writeArray(sw, snap.Domains)
	sw.raw(`,"files":`)
	writeArray(sw, snap.Files)
	sw.raw(`,"detaching":`)
	writeArray(sw, snap.Detaching)
	sw.raw(`,"uploads":`)
	writeArray(sw, snap.Uploads)
	sw.raw(`}`)
	return sw.err
}

// snapWriter encodes values one at a time and keeps the first error.
type snapWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
	// scratch is reused for each deployment's text
	scratch []byte
}

func (sw *snapWriter) raw(s string) {
	if sw.err == nil {
		_, sw.err = io.WriteString(sw.w, s)
	}
}

func (sw *snapWriter) value(v any) {
	if sw.err != nil {
		return
	}
	if d, ok := v.(*Deployment); ok { // most of a big world: written into one buffer
		sw.scratch = appendDeployment(sw.scratch[:0], d)
		_, sw.err = sw.w.Write(sw.scratch)
		return
	}
	// A type that writes itself (the state types, for their Timestamps) already writes
	// compact JSON through json.Marshal, HTML-escaped as an Encoder would: written as is,
	// its bytes are not compacted a second time (a third of an export's time).
	if m, ok := v.(json.Marshaler); ok {
		var b []byte
		if b, sw.err = m.MarshalJSON(); sw.err == nil {
			_, sw.err = sw.w.Write(b)
		}
		return
	}
	sw.buf.Reset()
	if sw.err = sw.enc.Encode(v); sw.err == nil {
		_, sw.err = sw.w.Write(bytes.TrimSuffix(sw.buf.Bytes(), []byte("\n")))
	}
}

// writeArray writes a slice as json.Marshal does: null when nil.
func writeArray[T any](sw *snapWriter, s []T) {
	if s == nil {
		sw.raw("null")
		return
	}
	sw.raw("[")
	for i := range s {
		if i > 0 {
			sw.raw(",")
		}
		sw.value(&s[i])
	}
	sw.raw("]")
}
