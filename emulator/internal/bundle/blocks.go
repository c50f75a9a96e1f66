package bundle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// state.json's text is written as a run of gzip members of at most blockSize bytes of
// text each (blocks), rather than as one: a stream of members reads as one stream
// everywhere (tar xzf, gunzip, every gzip library), and each block's header says, in
// an extra field of its own (RFC 1952's FEXTRA, subfield "HE"), how long its
// compressed data is. A reader that knows this finds the next block without
// inflating the one before it, and so inflates several at once: decompression, which
// costs as much as decoding the state, no longer runs on one core. Bundles written
// before, and members that are not blocks, are read one after the other as ever.

// blockSize bounds the text of one block: what the goroutine that compresses behind the
// state's encoder is handed at a time.
const blockSize = chunkSize

// maxBlockData bounds a block's compressed data: deflate adds 5 bytes for each 64 KiB
// it cannot compress, so a block of blockSize bytes stays well under it.
const maxBlockData = blockSize + blockSize/16

// blocksInFlight is how many blocks are read ahead of the one being decoded and
// inflated, at most, by the inflater goroutines and the reader itself.
const blocksInFlight = 4

// blockHeaderSize is the size of a block's gzip header, blockTrailerSize of its
// trailer (CRC-32 and length of the text).
const (
	blockHeaderSize  = 20
	blockTrailerSize = 8
)

// blockHeader is a block's gzip header, the length of its compressed data left out
// (its last four bytes): deflate, FEXTRA, no time, unknown OS, eight bytes of extra
// field holding the subfield "HE" of four bytes.
var blockHeader = [blockHeaderSize - 4]byte{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 8, 0, 'H', 'E', 4, 0}

// blockWriter writes each Write (at most blockSize bytes) to w as one block.
type blockWriter struct {
	w   io.Writer
	fw  *flate.Writer
	buf bytes.Buffer
}

func newBlockWriter(w io.Writer) *blockWriter {
	fw, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level
	return &blockWriter{w: w, fw: fw}
}

func (b *blockWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b.buf.Reset()
	b.buf.Write(blockHeader[:])
	b.buf.Write([]byte{0, 0, 0, 0}) // the data's length, once known
	b.fw.Reset(&b.buf)
	b.fw.Write(p) // into memory: never fails
	b.fw.Close()
	out := b.buf.Bytes()
	binary.LittleEndian.PutUint32(out[blockHeaderSize-4:], uint32(len(out)-blockHeaderSize))
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(p))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(p)))
	if _, err := b.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// errBlock is what is wrong with a block whose header is a block's.
var errBlock = errors.New("gzip: a block of state.json is corrupt")

// blockDataLen is the length of the compressed data of the block that comes next in
// br, or -1 when what comes next is not a block (nothing is consumed).
func blockDataLen(br *bufio.Reader) int {
	h, err := br.Peek(blockHeaderSize)
	if err != nil || !bytes.Equal(h[:len(blockHeader)], blockHeader[:]) {
		return -1
	}
	return int(binary.LittleEndian.Uint32(h[len(blockHeader):]))
}

// block is one block read from the stream, inflated on a goroutine of its own.
type block struct {
	in   []byte // the whole gzip member
	out  []byte // its text, once done is closed
	err  error
	done chan struct{}
}

// blocks inflates the blocks that come next in a stream, several at once, and hands
// their text on in order.
//
// The blocks are inflated oldest first, by inflater goroutines (one fewer than
// GOMAXPROCS) and by the reader itself: a reader whose next block is not inflated yet
// inflates the oldest one nobody has begun rather than wait. So each core has one
// goroutine's work and no more (the reader's, decoding, above all), the block the
// reader needs next is the one being inflated first, and no core waits while a block
// waits to be inflated. (A goroutine a block, as before, ran them in whatever order the
// scheduler chose, often the newest first, and more of them than cores.) On one core
// there is no inflater: the reader inflates each block when it comes to it, one block
// read at a time, with no hand-off to another goroutine.
type blocks struct {
	br      *bufio.Reader
	pending []*block // read, in order: inflated, being inflated or waiting in todo
	free    []*block
	off     int  // how much of pending[0].out was read
	more    bool // whether blocks may follow those pending
	q       *inflateQueue
}

// inflateQueue holds the blocks nobody has begun to inflate, oldest first, for the
// inflater goroutines and the reader to take.
type inflateQueue struct {
	mu      sync.Mutex
	todo    []*block
	running int // inflater goroutines; each ends once todo is empty
	most    int // inflater goroutines at most
}

// push queues b, starting an inflater when fewer than most run.
func (q *inflateQueue) push(b *block) {
	q.mu.Lock()
	q.todo = append(q.todo, b)
	spawn := q.running < q.most
	if spawn {
		q.running++
	}
	q.mu.Unlock()
	if spawn {
		go q.inflater()
	}
}

// take is the oldest block nobody has begun, taken out of todo; nil when none.
func (q *inflateQueue) take() *block { return q.next(false) }

// next is take; for an inflater (ending), finding none also counts it out, under the
// same lock, so that push starts another for a block queued after.
func (q *inflateQueue) next(ending bool) *block {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.todo) == 0 {
		if ending {
			q.running--
		}
		return nil
	}
	b := q.todo[0]
	q.todo[0] = nil
	q.todo = q.todo[1:]
	return b
}

// inflater inflates the blocks in todo until there are none (it never waits for
// more: the reader starts another inflater when it queues one).
func (q *inflateQueue) inflater() {
	for b := q.next(true); b != nil; b = q.next(true) {
		b.inflate()
	}
}

// start reads the next block from br and starts inflating it; false when what comes
// next is not a block (or is cut: the error is the block's).
func (bs *blocks) start() bool {
	n := blockDataLen(bs.br)
	if n < 0 {
		return false
	}
	var b *block
	if k := len(bs.free); k > 0 {
		b, bs.free = bs.free[k-1], bs.free[:k-1]
	} else {
		b = &block{}
	}
	b.err, b.done = nil, make(chan struct{})
	bs.pending = append(bs.pending, b)
	if n > maxBlockData {
		b.err = errBlock
		close(b.done)
		return false
	}
	size := blockHeaderSize + n + blockTrailerSize
	if cap(b.in) < size {
		b.in = make([]byte, size)
	}
	b.in = b.in[:size]
	if _, err := io.ReadFull(bs.br, b.in); err != nil {
		b.err = err
		close(b.done)
		return false
	}
	bs.q.push(b)
	return true
}

// inFlight is how many blocks are read ahead at most: blocksInFlight, or only the one
// being read when the reader inflates them all itself (no inflater: one core). The
// queue is made on the first call, before any block is started.
func (bs *blocks) inFlight() int {
	if bs.q == nil {
		bs.q = &inflateQueue{most: runtime.GOMAXPROCS(0) - 1}
	}
	if bs.q.most == 0 {
		return 1
	}
	return blocksInFlight
}

// inflate inflates b.in into b.out, at most blockSize bytes, checking its length and
// CRC-32 as gzip does.
func (b *block) inflate() {
	defer close(b.done)
	b.inflateWith(true)
}

// inflateWith is inflate; fast says whether inflateBlock is tried first (the stream
// reader inflates what it gives up on, and all when fast is false: the two read
// alike, FuzzInflateBlock).
func (b *block) inflateWith(fast bool) {
	data := b.in[blockHeaderSize : len(b.in)-blockTrailerSize]
	trailer := b.in[len(b.in)-blockTrailerSize:]
	size := binary.LittleEndian.Uint32(trailer[4:])
	if size > blockSize {
		b.err = errBlock
		return
	}
	if cap(b.out) < blockSize+1 {
		b.out = make([]byte, blockSize+1)
	}
	if fast {
		if n, ok := inflateBlock(b.out[:blockSize+1], data); ok {
			b.out = b.out[:n]
			b.check(trailer, uint32(n) != size)
			return
		}
	}
	// a stream reader of its own: one reset after another stream keeps that stream's
	// code tables, and may word a corrupt block's error after them ("flate: internal
	// error: unexpected length code" where a new one says "flate: corrupt input before
	// offset 4"); it reads only what inflateBlock gives up on
	src := bytes.NewReader(data)
	fr := flate.NewReader(src)
	// read until the deflate stream itself says it ended (io.EOF): io.ReadFull would
	// take flate's io.ErrUnexpectedEOF, a stream cut before its final block, for the
	// end of a short block
	buf, n := b.out[:blockSize+1], 0
	var err error
	for n < len(buf) && err == nil {
		var m int
		m, err = fr.Read(buf[n:])
		n += m
	}
	b.out = b.out[:n]
	switch {
	case err == nil: // more than blockSize bytes
		b.err = errBlock
	case err == io.ErrUnexpectedEOF:
		b.err = errBlock
	case err != io.EOF:
		b.err = err
	default:
		b.check(trailer, src.Len() != 0 || uint32(n) != size)
	}
}

// check holds a block's text, inflated whole, to its trailer: errBlock when its length
// or its data's is wrong (bad), else gzip's checksum error when the CRC-32 differs.
func (b *block) check(trailer []byte, bad bool) {
	switch {
	case bad:
		b.err = errBlock
	case crc32.ChecksumIEEE(b.out) != binary.LittleEndian.Uint32(trailer):
		b.err = gzip.ErrChecksum
	}
}

// Read reads the blocks' text in order; io.EOF once the blocks are over (what follows
// them is the caller's to read from br).
func (bs *blocks) Read(p []byte) (int, error) {
	for {
		for bs.more && len(bs.pending) < bs.inFlight() {
			bs.more = bs.start()
		}
		if len(bs.pending) == 0 {
			return 0, io.EOF
		}
		b := bs.pending[0]
		select {
		case <-b.done:
		default:
			// not inflated yet: inflate the oldest block nobody has begun (this one,
			// or one after it) rather than wait, else wait
			if o := bs.q.take(); o != nil {
				o.inflate()
				continue
			}
			<-b.done
		}
		if b.err != nil {
			return 0, b.err
		}
		if bs.off < len(b.out) {
			n := copy(p, b.out[bs.off:])
			bs.off += n
			return n, nil
		}
		bs.pending, bs.off = bs.pending[1:], 0
		bs.free = append(bs.free, b)
	}
}
