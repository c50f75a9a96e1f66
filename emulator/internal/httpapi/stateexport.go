package httpapi

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/notify"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Concurrent exports of a world's state (GET /_emulator/state, the answer of a PUT)
// share one encoding: the JSON text of the state at one change count, encoded once and
// written to every reader from the same bytes. A reader that reads slowly, or not at
// all, costs its socket's buffers, not a copy of the state (issue 32 item 6: 48 slow
// readers of an 18.5 MB state took 724 MB, a snapshot each). A reader arriving after a
// change gets a new encoding, so each reader sees every write answered before it asked.

// maxStateEncodings bounds the distinct encodings held at once, every world together:
// readers of one version share one, but a reader of each version between writes would
// hold one each. Beyond it, a new version waits for one to be let go (DefaultImportWait
// at most), then is 503 with Retry-After.
const maxStateEncodings = 4

// encodingChunk is the size of the pieces an encoding is kept in: growing one slice
// would copy it at each doubling and hold twice the text at the end.
const encodingChunk = 64 << 10

// stateExports holds the encodings being read.
type stateExports struct {
	slots chan struct{} // one per encoding held

	mu      sync.Mutex                      // guards current, readers and each encoding's seq and refs
	current map[*world.World]*stateEncoding // each world's newest encoding with readers
	readers int                             // requests holding an encoding, every world together
	bytes   int64                           // the text of the encodings held
	changed notify.Signal                   // readers or bytes moved, for tests
}

func newStateExports() *stateExports {
	return &stateExports{slots: make(chan struct{}, maxStateEncodings), current: map[*world.World]*stateEncoding{}}
}

// stateEncoding is a world's state as JSON text at one change count.
type stateEncoding struct {
	seq    uint64        // the world's Changes count it reflects at least
	ready  chan struct{} // closed once chunks or err are set
	chunks [][]byte
	size   int64
	err    error
	refs   int    // readers holding it
	slot   func() // gives its place among maxStateEncodings back
}

// stateStream is an answer that writes a shared encoding, then lets go of it. handle
// writes it, or lets go of it unwritten when the request fails after all (a write not
// made durable).
type stateStream struct {
	e   *stateExports
	w   *world.World
	enc *stateEncoding
}

func (s *stateStream) write(out io.Writer) error {
	defer s.release()
	for _, b := range s.enc.chunks {
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (s *stateStream) release() { s.e.release(s.w, s.enc) }

// streamState is the world's state now, written from the encoding shared by every
// export of the same version.
func (a *API) streamState(c *gin.Context, w *world.World) (any, error) {
	enc, err := a.exports.acquire(c, w, func(slots chan struct{}) (func(), error) {
		return a.takeTurn(c, slots, fmt.Sprintf("each of %d state exports (of different versions of a state)", maxStateEncodings))
	})
	if err != nil {
		return nil, err
	}
	return &stateStream{e: a.exports, w: w, enc: enc}, nil
}

// acquire is the encoding of w's state now: the one being read, if the state has not
// changed since, else a new one once turn gives it a place.
func (e *stateExports) acquire(c *gin.Context, w *world.World, turn func(chan struct{}) (func(), error)) (*stateEncoding, error) {
	seq := w.ChangesNow()
	if enc := e.join(w, seq); enc != nil {
		return e.await(c.Request.Context(), w, enc)
	}
	slot, err := turn(e.slots)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if enc := e.current[w]; enc != nil && enc.seq == seq { // encoded while this one waited
		enc.refs++
		e.readers++
		e.changed.Notify()
		e.mu.Unlock()
		slot()
		return e.await(c.Request.Context(), w, enc)
	}
	enc := &stateEncoding{seq: seq, ready: make(chan struct{}), refs: 1, slot: slot}
	e.current[w] = enc
	e.readers++
	e.changed.Notify()
	e.mu.Unlock()

	snap, at := w.ExportSeq()
	var text chunkWriter
	enc.err = state.WriteSnapshot(&text, &snap, "")
	enc.chunks, enc.size = text.chunks, text.size
	e.mu.Lock()
	enc.seq = max(enc.seq, at) // readers at the count it was taken at share it too
	e.bytes += enc.size
	e.changed.Notify()
	e.mu.Unlock()
	close(enc.ready)
	if enc.err != nil {
		e.release(w, enc)
		return nil, enc.err
	}
	return enc, nil
}

// join takes a reader's hold of w's encoding at seq, or returns nil when there is none.
func (e *stateExports) join(w *world.World, seq uint64) *stateEncoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	enc := e.current[w]
	if enc == nil || enc.seq != seq {
		return nil
	}
	enc.refs++
	e.readers++
	e.changed.Notify()
	return enc
}

// await waits for the encoding enc, held by this reader, to be done.
func (e *stateExports) await(ctx context.Context, w *world.World, enc *stateEncoding) (*stateEncoding, error) {
	select {
	case <-enc.ready:
	case <-ctx.Done():
		e.release(w, enc)
		return nil, apperr.New(apperr.ServiceUnavailable, "the client went away while the state was encoded")
	}
	if enc.err != nil {
		e.release(w, enc)
		return nil, enc.err
	}
	return enc, nil
}

// release lets go of a reader's hold; the last one frees the encoding and its place.
func (e *stateExports) release(w *world.World, enc *stateEncoding) {
	e.mu.Lock()
	defer e.mu.Unlock()
	enc.refs--
	e.readers--
	e.changed.Notify()
	if enc.refs > 0 {
		return
	}
	if e.current[w] == enc {
		delete(e.current, w)
	}
	e.bytes -= enc.size
	enc.slot()
}

// wait blocks until cond holds of the readers holding an encoding and the bytes the
// encodings hold, or ctx ends; for tests.
func (e *stateExports) wait(ctx context.Context, cond func(readers int, bytes int64) bool) (int, int64, error) {
	for {
		ch := e.changed.Next()
		e.mu.Lock()
		readers, bytes := e.readers, e.bytes
		e.mu.Unlock()
		if cond(readers, bytes) {
			return readers, bytes, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return readers, bytes, ctx.Err()
		}
	}
}

// WaitStateExports blocks until cond holds of the state exports under way (readers
// holding an encoding) and the bytes of text their encodings hold, or ctx ends. Tests
// use it to know every reader is being served.
func (a *API) WaitStateExports(ctx context.Context, cond func(readers int, bytes int64) bool) (int, int64, error) {
	return a.exports.wait(ctx, cond)
}

// chunkWriter keeps what is written in encodingChunk pieces.
type chunkWriter struct {
	chunks [][]byte
	size   int64
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == encodingChunk {
			c.chunks = append(c.chunks, make([]byte, 0, encodingChunk))
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(len(p), encodingChunk-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	c.size += int64(n)
	return n, nil
}
