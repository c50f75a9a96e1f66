package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klauspost/compress/flate"
)

// blockOf is a block of text deflated at level (a level of klauspost/compress/flate,
// -2 for Huffman only, 0 for stored), as blockWriter writes one at BestSpeed.
func blockOf(text []byte, level int) []byte {
	var data bytes.Buffer
	fw, err := flate.NewWriter(&data, level)
	if err != nil {
		panic(err)
	}
	fw.Write(text)
	fw.Close()
	out := append(blockHeader[:], binary.LittleEndian.AppendUint32(nil, uint32(data.Len()))...)
	out = append(out, data.Bytes()...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(text))
	return binary.LittleEndian.AppendUint32(out, uint32(len(text)))
}

// inflatedBoth inflates in with inflateBlock first and with the stream reader alone,
// and says how they differ ("" when they do not).
func inflatedBoth(in []byte) (fast, slow *block, diff string) {
	fast, slow = reused(&fastBlock, in), reused(&slowBlock, in)
	// each with a flate reader of its own: one reused after a corrupt stream may call
	// the next one corrupt differently (its error, or errBlock)
	flates = sync.Pool{New: flates.New}
	fast.inflateWith(true)
	flates = sync.Pool{New: flates.New}
	slow.inflateWith(false)
	switch {
	case errorKind(fast.err) != errorKind(slow.err):
		return fast, slow, fmt.Sprintf("error %v, the stream reader's %v", fast.err, slow.err)
	case slow.err == nil && !bytes.Equal(fast.out, slow.out):
		return fast, slow, fmt.Sprintf("%d bytes of text, the stream reader's %d", len(fast.out), len(slow.out))
	}
	return fast, slow, ""
}

// errorKind is err's text, but of a flate.CorruptInputError: its type (the offset it
// names depends on what the pooled flate reader read before, stream reader or not).
func errorKind(err error) string {
	if _, corrupt := err.(flate.CorruptInputError); corrupt {
		return "flate.CorruptInputError"
	}
	return fmt.Sprint(err)
}

// fastBlock and slowBlock are inflatedBoth's blocks, their text's buffers reused (a
// block's is blockSize).
var fastBlock, slowBlock block

// reused is *b, reset to inflate in.
func reused(b *block, in []byte) *block {
	b.in, b.out, b.err = in, b.out[:0], nil
	return b
}

// texts are texts whose deflate streams use each kind of block, code and match: a
// state's JSON, runs (distances of 1 to 7, long lengths), random bytes (stored
// blocks), a few symbols (short codes), a text of one byte repeated, and empty.
func texts(seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	state := stateText()
	runs := make([]byte, 0, 300<<10)
	for len(runs) < 300<<10 {
		period := 1 + r.IntN(12)
		unit := make([]byte, period)
		for i := range unit {
			unit[i] = byte('a' + r.IntN(26))
		}
		for range r.IntN(400) {
			runs = append(runs, unit...)
		}
	}
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	few := make([]byte, 200<<10)
	for i := range few {
		few[i] = "ab\n"[min(r.IntN(7), 2)]
	}
	return [][]byte{state, runs, random, few, bytes.Repeat([]byte{'x'}, 70000), {}, []byte("x")}
}

// stateText is a state document's text of about blockSize bytes.
func stateText() []byte {
	var doc bytes.Buffer
	for i := 0; doc.Len() < blockSize-4096; i++ {
		fmt.Fprintf(&doc, `{"id":"dpl_%08d","url":"https://app-%d.hostemu.localhost","logs":[{"text":"Building dpl_%08d (%d files)","created_at":"2026-11-26T22:28:%02d.000Z"}]},`, i, i%977, i, i%13, i%60)
	}
	return doc.Bytes()
}

// inflateBlock reads what the stream reader reads, at every level, text for text:
// the replay's blocks (BestSpeed) are read by it, anything else falls back.
func TestInflateBlockReadsAsTheStreamReader(t *testing.T) {
	for ti, text := range texts(1) {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, 1, 2, 3, 4, 5, 6, 7, 8, 9} {
			in := blockOf(text, level)
			fast, _, diff := inflatedBoth(in)
			if diff != "" {
				t.Fatalf("text %d, level %d: %s", ti, level, diff)
			}
			if fast.err != nil || !bytes.Equal(fast.out, text) {
				t.Fatalf("text %d, level %d: %v", ti, level, fast.err)
			}
			if _, ok := inflateBlock(make([]byte, blockSize+1), in[blockHeaderSize:len(in)-blockTrailerSize]); !ok && level == 1 && ti == 0 {
				t.Errorf("inflateBlock gave up on a state's text at BestSpeed: the stream reader read it")
			}
		}
	}
}

// A block cut, grown, or changed anywhere reads as the stream reader reads it: the
// same error, or the same text.
func TestInflateBlockRefusesAsTheStreamReader(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for ti, text := range texts(3) {
		for _, level := range []int{flate.HuffmanOnly, 1, 6, 9} {
			in := blockOf(text, level)
			data := len(in) - blockHeaderSize - blockTrailerSize
			for range 40 {
				bad := bytes.Clone(in)
				switch r.IntN(4) {
				case 0: // a byte changed
					bad[blockHeaderSize+r.IntN(max(data, 1))] ^= byte(1 + r.IntN(255))
				case 1: // cut, the trailer kept
					cut := r.IntN(max(data, 1))
					bad = append(bad[:blockHeaderSize+cut:blockHeaderSize+cut], in[len(in)-blockTrailerSize:]...)
				case 2: // bytes after the stream
					bad = append(bad[:len(in)-blockTrailerSize:len(in)-blockTrailerSize], append([]byte{0, 1, 2}[:1+r.IntN(3)], in[len(in)-blockTrailerSize:]...)...)
				default: // a bit flipped
					bad[blockHeaderSize+r.IntN(max(data, 1))] ^= 1 << r.IntN(8)
				}
				if _, _, diff := inflatedBoth(bad); diff != "" {
					t.Fatalf("text %d, level %d, changed: %s", ti, level, diff)
				}
			}
		}
	}
}

// FuzzInflateBlock: inflateBlock first, then the stream reader on what it gives up on,
// read any block as the stream reader alone reads it: the same text or the same error.
func FuzzInflateBlock(f *testing.F) {
	for _, text := range texts(4)[1:] {
		for _, level := range []int{flate.HuffmanOnly, 1, 9} {
			in := blockOf(text[:min(len(text), 2000)], level)
			f.Add(in[blockHeaderSize : len(in)-blockTrailerSize])
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x03, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, size := range []int{-1, 0, 1} {
			// the trailer's length: the text's, as inflated, or one off
			probe := reused(&slowBlock, framed(data, 0, 0))
			probe.inflateWith(false)
			n := uint32(max(len(probe.out)+size, 0))
			for _, crc := range []uint32{crc32.ChecksumIEEE(probe.out), 0} {
				if _, _, diff := inflatedBoth(framed(data, crc, n)); diff != "" {
					t.Fatalf("size %+d, crc %x: %s", size, crc, diff)
				}
			}
		}
	})
}

// framed is deflate data in a block's header and trailer.
func framed(data []byte, crc, size uint32) []byte {
	out := append(blockHeader[:], binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	out = append(out, data...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, size)
}
