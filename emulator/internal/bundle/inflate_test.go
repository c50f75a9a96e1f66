package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
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
	fast.inflateWith(true)
	slow.inflateWith(false)
	switch {
	case fmt.Sprint(fast.err) != fmt.Sprint(slow.err):
		return fast, slow, fmt.Sprintf("error %v, the stream reader's %v", fast.err, slow.err)
	case slow.err == nil && !bytes.Equal(fast.out, slow.out):
		return fast, slow, fmt.Sprintf("%d bytes of text, the stream reader's %d", len(fast.out), len(slow.out))
	}
	return fast, slow, ""
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
	for _, c := range hostileBlocks() {
		f.Add(c.data)
	}
	// the fast loop's last round at 275 bytes from the end of inflateBlock's out
	// (blockSize+1): three entries of two literals and a match of 258 at distance 9;
	// then 10 literals (a text of blockSize) or 11 (one past it), the data padded or not
	f.Add(must(edgeBlock(4063, 46, 10, true, true)))
	f.Add(must(edgeBlock(4063, 46, 11, true, false)))
	f.Fuzz(func(t *testing.T, data []byte) {
		// the fast loop stops for the input's end as well as out's: data with no
		// capacity past its end (Go checks a slice expression against the capacity),
		// out with room to spare; a read past the end panics
		inflateBlock(make([]byte, 1<<16), bytes.Clone(data)[:len(data):len(data)])
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

// bitWriter writes a deflate stream's bits by hand: values from their lowest bit,
// Huffman codes from their highest (RFC 1951, 3.1.1).
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, n uint) *bitWriter {
	w.acc |= v << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
	return w
}

func (w *bitWriter) code(c uint64, n uint) *bitWriter {
	var r uint64
	for i := range n {
		r |= (c >> i & 1) << (n - 1 - i)
	}
	return w.bits(r, n)
}

// fixed writes symbol s of the fixed literal/length code.
func (w *bitWriter) fixed(s int) *bitWriter {
	switch {
	case s < 144:
		return w.code(uint64(0x30+s), 8)
	case s < 256:
		return w.code(uint64(0x190+s-144), 9)
	case s < 280:
		return w.code(uint64(s-256), 7)
	}
	return w.code(uint64(0xc0+s-280), 8)
}

// bytes is the stream, its last byte padded with zeros.
func (w *bitWriter) bytes() []byte {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
	return w.out
}

// dynamic writes a final dynamic block's header: hlit and hdist as counts (257..,
// 1..), all 19 code length code lengths, of which 0 and 1 (2 bits), 2, 16, 17 and
// 18 (3 bits) have codes, then lengths: the literal/length and distance codes' lengths
// as that code's symbols (zero runs as 17 and 18), or none.
func dynamic(hlit, hdist int, lengths []int) *bitWriter {
	w := new(bitWriter).bits(1, 1).bits(2, 2).bits(uint64(hlit-257), 5).bits(uint64(hdist-1), 5).bits(15, 4)
	cl := map[uint8]uint64{0: 2, 1: 2, 2: 3, 16: 3, 17: 3, 18: 3}
	for _, s := range codeOrder {
		w.bits(cl[s], 3)
	}
	clCode := map[int][2]uint64{0: {0, 2}, 1: {1, 2}, 2: {4, 3}, 16: {5, 3}, 17: {6, 3}, 18: {7, 3}}
	sym := func(s int) { w.code(clCode[s][0], uint(clCode[s][1])) }
	for i := 0; i < len(lengths); {
		run := 0
		for i+run < len(lengths) && lengths[i+run] == 0 {
			run++
		}
		switch {
		case run >= 11:
			run = min(run, 138)
			sym(18)
			w.bits(uint64(run-11), 7)
		case run >= 3:
			run = min(run, 10)
			sym(17)
			w.bits(uint64(run-3), 3)
		default:
			sym(lengths[i])
			run = 1
		}
		i += run
	}
	return w
}

// litCode is a literal/length code's 257 lengths: lits for a, b, ... in turn, end for
// the end of block's.
func litCode(end int, lits ...int) []int {
	l := make([]int, 257)
	for i, n := range lits {
		l['a'+i] = n
	}
	l[256] = end
	return l
}

// hostileBlock is deflate data made to test inflateBlock's every refusal: ok is
// whether inflateBlock takes it, text the stream reader's text (nil: its error).
type hostileBlock struct {
	name string
	data []byte
	ok   bool
	text []byte
}

func hostileBlocks() []hostileBlock {
	fixed := func() *bitWriter { return new(bitWriter).bits(1, 1).bits(1, 2) }
	// 'a' and matches of 258 at distance 1, then (more > 0) a match of more bytes
	// (59 to 66) or (more < 0) -more literals: the text's length is 1 + 258×matches +
	// |more|
	runs := func(matches, more int) []byte {
		w := fixed().fixed('a')
		for range matches {
			w.fixed(285).code(0, 5)
		}
		switch {
		case more > 0:
			w.fixed(276).bits(uint64(more-59), 3).code(0, 5) // 59 and 3 extra bits
		case more < 0:
			for range -more {
				w.fixed('a')
			}
		}
		return w.fixed(256).bytes()
	}
	full := blockSize - 1 - 63 // 'a' and 4064 matches: a match of 63 fills the block
	// "aa", 4064 matches of 258 at distance 1, then lits literals a and b by turns, end:
	// a dynamic block whose codes (a, b, the end, length 258) are all two bits long, so
	// that its literals are read two an entry (entryTwo) to the block's end, or a pair
	// of them starts at its last byte; the distance code is of one bit. The text's
	// length is 2 + 258×4064 + lits.
	pairs := func(lits int) []byte {
		l := make([]int, 286)
		l['a'], l['b'], l[256], l[285] = 2, 2, 2, 2
		w := dynamic(286, 1, append(l, 1)).code(0, 2).code(0, 2)
		for range 4064 {
			w.code(3, 2).code(0, 1)
		}
		for i := range lits {
			w.code(uint64(i&1), 2)
		}
		return w.code(2, 2).bytes()
	}
	// 54 literals, 4063 matches of 258 at distance 1, then, at 266 bytes from the end of
	// inflateBlock's text, one round of the fast loop: three entries of two literals and
	// a match of 258 at distance 9, whose copy writes 6 + 258 + 7 bytes past the round's
	// start (fastRoom). All its codes are two bits long, the distances' one. Twenty
	// empty blocks follow, so that the data lasts for the fast loop.
	roomy := func() []byte {
		l := make([]int, 286)
		l['a'], l['b'], l[256], l[285] = 2, 2, 2, 2
		w := dynamic(286, 7, append(l, 1, 0, 0, 0, 0, 0, 1))
		w.out[0] &^= 1 // not the last block
		for range 54 {
			w.code(0, 2)
		}
		for range 4063 {
			w.code(3, 2).code(0, 1)
		}
		for range 6 {
			w.code(0, 2)
		}
		w.code(3, 2).code(1, 1).bits(0, 2).code(2, 2)
		for range 20 {
			w.bits(0, 1).bits(1, 2).fixed(256)
		}
		return w.bits(1, 1).bits(1, 2).fixed(256).bytes()
	}
	pairsText := func(lits int) []byte {
		return append(bytes.Repeat([]byte{'a'}, 2+258*4064), bytes.Repeat([]byte("ab"), lits/2)...)
	}
	lengths := func(lit []int, dist ...int) []int { return append(lit, dist...) }
	return []hostileBlock{
		{name: "empty"},
		{name: "the reserved block type", data: []byte{0x07}},
		{name: "a stored block, LEN not NLEN's complement", data: []byte{0x01, 5, 0, 0, 0, 'a', 'a', 'a', 'a', 'a'}},
		{name: "a stored block longer than the data", data: []byte{0x01, 5, 0, 0xfa, 0xff, 'a'}},
		{name: "a stored block", data: []byte{0x01, 2, 0, 0xfd, 0xff, 'a', 'b'}, ok: true, text: []byte("ab")},
		{name: "data after the final block", data: append(fixed().fixed(256).bytes(), 0)},
		{name: "cut within a block", data: fixed().fixed('a').bytes()},
		{name: "no final block", data: new(bitWriter).bits(0, 1).bits(1, 2).fixed(256).bytes()},
		{name: "a distance before the text's start", data: fixed().fixed('a').fixed(257).code(1, 5).fixed(256).bytes()},
		{name: "a match", data: fixed().fixed('a').fixed(257).code(0, 5).fixed(256).bytes(), ok: true, text: []byte("aaaa")},
		{name: "distance code 30", data: fixed().fixed('a').fixed(257).code(30, 5).bits(0, 13).fixed(256).bytes()},
		{name: "distance code 31", data: fixed().fixed('a').fixed(257).code(31, 5).bits(0, 13).fixed(256).bytes()},
		{name: "length symbol 286", data: fixed().fixed('a').fixed(286).code(0, 5).fixed(256).bytes()},
		{name: "length symbol 287", data: fixed().fixed('a').fixed(287).code(0, 5).fixed(256).bytes()},
		{name: "a text that fills the block", data: runs(full/258, 63), ok: true, text: bytes.Repeat([]byte{'a'}, blockSize)},
		// a byte past blockSize is the trailer's to refuse (inflateBlock's text is
		// blockSize+1 long, which no trailer can say); two are past its out
		{name: "a match past the block", data: runs(full/258, 63+2)},
		{name: "a literal past the block", data: runs(full/258, -(63 + 2))},
		{name: "a text far past the block", data: runs(5000, 0)},
		{name: "two literals an entry, to the block's end", data: pairs(62), ok: true, text: pairsText(62)},
		{name: "two literals an entry, the last pair past the block", data: pairs(64)},
		{name: "literals and a match in the fast loop's last round", data: roomy(), ok: true, text: bytes.Repeat([]byte{'a'}, 54+258*4063+6+258)},
		{name: "HLIT 287", data: dynamic(287, 1, nil).bytes()},
		{name: "HDIST 31", data: dynamic(257, 31, nil).bytes()},
		{name: "repeat 16 first", data: dynamic(257, 1, []int{16, 0}).bytes()},
		{name: "repeat 18 past HLIT+HDIST", data: dynamic(257, 1, make([]int, 257+138)).bytes()},
		{name: "an over-subscribed code length code", data: func() []byte {
			w := new(bitWriter).bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(15, 4)
			for range 19 {
				w.bits(1, 3)
			}
			return w.bits(0, 8).bytes()
		}()},
		{name: "complete codes", data: dynamic(257, 2, lengths(litCode(1, 1), 1, 1)).code(0, 1).code(0, 1).code(1, 1).bytes(), ok: true, text: []byte("aa")},
		// RFC 1951 allows a distance code of one code of one bit, as BestSpeed writes it
		// for a block without matches; the bit string 1 is no distance's
		{name: "one distance code (allowed incomplete)", data: dynamic(257, 1, lengths(litCode(1, 1), 1)).code(0, 1).code(0, 1).code(1, 1).bytes(), ok: true, text: []byte("aa")},
		{name: "one distance code, a match", data: dynamic(258, 1, lengths(append(litCode(2, 1), 2), 1)).code(0, 1).code(3, 2).code(0, 1).code(2, 2).bytes(), ok: true, text: []byte("aaaa")},
		{name: "one distance code, the bit string no code's", data: dynamic(258, 1, lengths(append(litCode(2, 1), 2), 1)).code(0, 1).code(3, 2).code(1, 1).code(2, 2).bytes()},
		{name: "one distance code of two bits", data: dynamic(257, 1, lengths(litCode(1, 1), 2)).code(0, 1).code(0, 1).code(1, 1).bytes()},
		{name: "an incomplete literal/length code", data: dynamic(257, 2, lengths(litCode(2, 1), 1, 1)).code(0, 1).code(2, 2).bytes()},
		{name: "an over-subscribed literal/length code", data: dynamic(257, 2, lengths(litCode(1, 1, 1, 1), 1, 1)).code(0, 1).code(1, 1).bytes()},
		{name: "no end of block", data: dynamic(257, 2, lengths(litCode(0, 1, 1), 1, 1)).code(0, 1).code(1, 1).bytes()},
	}
}

// Hand-made hostile blocks: inflateBlock gives up on each but the few well-formed
// ones, and the block reads as the stream reader reads it.
func TestInflateBlockHostileBlocks(t *testing.T) {
	out := make([]byte, blockSize+1)
	for _, c := range hostileBlocks() {
		if n, ok := inflateBlock(out, c.data); ok != c.ok || ok && !bytes.Equal(out[:n], c.text) {
			t.Errorf("%s: inflateBlock took it: %v, %d bytes; want %v", c.name, ok, n, c.ok)
		}
		fast, _, diff := inflatedBoth(framed(c.data, crc32.ChecksumIEEE(c.text), uint32(len(c.text))))
		switch {
		case diff != "":
			t.Errorf("%s: %s", c.name, diff)
		case c.text == nil && fast.err == nil:
			t.Errorf("%s: read %q, want an error", c.name, fast.out)
		case c.text != nil && (fast.err != nil || !bytes.Equal(fast.out, c.text)):
			t.Errorf("%s: %v, %d bytes; want %d", c.name, fast.err, len(fast.out), len(c.text))
		}
	}
}

// A corrupt block's error is its own, whatever block the stream reader read before:
// after prev, a reader reset for this (klauspost's Reset keeps prev's code tables)
// said "flate: internal error: unexpected length code", a new one "flate: corrupt
// input before offset 4" (FuzzInflateBlock's finds).
func TestStreamReaderErrorDoesNotDependOnTheBlockBefore(t *testing.T) {
	prev := framed([]byte("\x04\xc0A\n\x001\bC\xd1\xcb\xfeYЍ1XC9\xfd00000"), 0, 0)
	this := framed([]byte("%2\x00\x00\x00\x81\x00\x00\x90d\x00\x00\x00"), 0, 0)
	var first, after block
	first.in = this
	first.inflateWith(false)
	for range 3 { // sync.Pool drops some of what it is given under -race
		after = block{in: prev}
		after.inflateWith(false)
		after = block{in: this}
		after.inflateWith(false)
		if fmt.Sprint(after.err) != fmt.Sprint(first.err) {
			t.Fatalf("after another block: %v; alone: %v", after.err, first.err)
		}
	}
	if _, corrupt := first.err.(flate.CorruptInputError); !corrupt {
		t.Errorf("alone: %v, want flate's corrupt input", first.err)
	}
}
