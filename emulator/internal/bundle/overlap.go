package bundle

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// The archive's two costly steps each pair with another: state.json's encoding with
// its compression on the way out, decompression with the state's decoding on the way
// in. Each pair runs on two goroutines joined by a few chunks of memory, so that a big
// world takes the longer step's time rather than both added.

// chunkSize and chunksInFlight bound what the two goroutines hold between them.
const (
	chunkSize      = 1 << 20
	chunksInFlight = 4
)

// behindWriter hands what is written to it, chunk by chunk, to a goroutine that writes
// it to w. Close waits for that goroutine and returns its first error; after an error,
// Write fails too.
type behindWriter struct {
	buf    []byte
	full   chan []byte
	free   chan []byte
	done   chan error
	failed atomic.Bool
	n      int64
}

func newBehindWriter(w io.Writer) *behindWriter {
	b := &behindWriter{full: make(chan []byte, chunksInFlight), free: make(chan []byte, chunksInFlight+1), done: make(chan error, 1)}
	for range chunksInFlight {
		b.free <- make([]byte, 0, chunkSize)
	}
	b.buf = make([]byte, 0, chunkSize)
	go func() {
		var err error
		for chunk := range b.full {
			if err == nil {
				if _, err = w.Write(chunk); err != nil {
					b.failed.Store(true)
				}
			}
			b.free <- chunk[:0]
		}
		b.done <- err
	}()
	return b
}

var errBehind = errors.New("the writer behind failed")

func (b *behindWriter) Write(p []byte) (int, error) {
	if b.failed.Load() {
		return 0, errBehind
	}
	n := len(p)
	for len(p) > 0 {
		k := copy(b.buf[len(b.buf):cap(b.buf)], p)
		b.buf, p = b.buf[:len(b.buf)+k], p[k:]
		if len(b.buf) == cap(b.buf) {
			b.full <- b.buf
			b.buf = <-b.free
		}
	}
	b.n += int64(n)
	return n, nil
}

// Close hands on what is left and waits for the goroutine: its error, if any.
func (b *behindWriter) Close() error {
	if len(b.buf) > 0 {
		b.full <- b.buf
	}
	close(b.full)
	return <-b.done
}

// aheadReader reads r on a goroutine, chunks ahead of its reader. Stop ends the
// goroutine and waits for it: whoever owns r may then use or close it.
type aheadReader struct {
	full chan []byte
	free chan []byte
	quit chan struct{}
	wg   sync.WaitGroup
	cur  []byte // the chunk being read
	off  int    // how much of cur has been read
	err  error  // the goroutine's last word, read once full is closed
	stop sync.Once
}

func newAheadReader(r io.Reader) *aheadReader {
	a := &aheadReader{full: make(chan []byte, chunksInFlight), free: make(chan []byte, chunksInFlight+1), quit: make(chan struct{})}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(a.full)
		made := 0 // chunks are made as they are needed: a small member takes one
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			default:
				if made < chunksInFlight+1 {
					buf = make([]byte, chunkSize)
					made++
					break
				}
				select {
				case buf = <-a.free:
				case <-a.quit:
					return
				}
			}
			n, err := fill(r, buf[:cap(buf)], a.quit)
			if n > 0 {
				select {
				case a.full <- buf[:n]:
				case <-a.quit:
					return
				}
			}
			if err != nil {
				a.err = err
				return
			}
		}
	}()
	return a
}

func (a *aheadReader) Read(p []byte) (int, error) {
	for a.off == len(a.cur) {
		if a.cur != nil {
			a.free <- a.cur
			a.cur, a.off = nil, 0
		}
		chunk, ok := <-a.full
		if !ok {
			if a.err == nil { // stopped before the end
				return 0, io.ErrClosedPipe
			}
			return 0, a.err // set before full closed; every read after says the same
		}
		a.cur, a.off = chunk, 0
	}
	n := copy(p, a.cur[a.off:])
	a.off += n
	return n, nil
}

// fill reads into buf until it is full, r fails or quit is closed (then it returns what
// it has); r's error is returned as is (io.EOF at the end, whatever a cut stream says
// when cut).
func fill(r io.Reader, buf []byte, quit <-chan struct{}) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
		select {
		case <-quit:
			return n, nil
		default:
		}
	}
	return n, nil
}

// Stop ends the goroutine and waits for it.
func (a *aheadReader) Stop() {
	a.stop.Do(func() { close(a.quit) })
	a.wg.Wait()
}
