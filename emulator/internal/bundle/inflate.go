package bundle

import (
	"encoding/binary"
	"math/bits"
)

// inflateBlock inflates a block's deflate data whole into out (RFC 1951), the way a
// block of state.json is inflated most often: its text is at most blockSize bytes, so
// all of it is at hand as its own window, and the data is all in memory. It reads the
// data eight bytes at a time, writes each literal and match straight into out, and
// finds a length's or distance's base and extra bits in its code's table entry; the
// stream reader (klauspost/compress/flate) reads a byte at a time and writes through a
// 32 KiB window, which it then copies out, and took about twice as long on a bundle's
// blocks (86 against 45 ms for 20 of them, at GOMAXPROCS=1).
//
// It says ok only when the data is exactly one deflate stream, ending at the data's
// last byte, whose text fits in out; it gives up (false) on anything else — a code that
// is not complete (the stream reader accepts some), a symbol or distance that means
// nothing, a distance before the text's start, text past out's end, data cut or left
// after the stream's end, the reserved block type — for the stream reader to inflate
// the block again and say what is wrong, as it always has. (FuzzInflateBlock holds the
// two to the same text, or the same error.)
func inflateBlock(out, data []byte) (int, bool) {
	d := inflater{in: data, out: out}
	return d.stream()
}

// inflater inflates in into out: bits is the bit buffer (its low nb bits the next ones
// of the stream, the bits above them zero or the stream's next ones, uncounted: block's
// refill reads whole words), pos the next byte of in to take into it.
type inflater struct {
	in   []byte
	pos  int
	bits uint64
	nb   uint
	out  []byte
	n    int
	// the block's codes: the literal/length code's table, and the distances'; cl is
	// the code lengths' code's, kept here rather than made anew (zeroed) a block
	lit, dist, cl huffTable
}

// The tables look a code up by its first bits, a longer code by the rest of its bits in
// a second-level table of its prefix: litTableBits for literals and lengths, distTableBits
// for distances, clTableBits for the code lengths' code (whose codes are 7 bits at most: no
// second level). Eleven bits for literals (ten before) leave a state's blocks fewer
// second-level lookups and, above all, room for two literals' codes in one entry
// (entryTwo): BestSpeed's literals take 8 or 9 bits at most, often fewer, and most of a
// state's text is literals. The other two are as small as serves: a block's tables are
// built anew (cleared and filled) for each of its deflate blocks, and building them was
// a seventh of the inflating (a profile of the bundle's blocks: codes 0.56 of 3.6 s).
const (
	litTableBits  = 11
	distTableBits = 10
	clTableBits   = 7
)

// tableBits is the first level's bits of a code of kind.
func tableBits(kind int) int {
	switch kind {
	case litLengths:
		return litTableBits
	case distances:
		return distTableBits
	}
	return clTableBits
}

// huffTable decodes one canonical Huffman code. Each entry of main (its first 1<<bits,
// bits the code's kind's tableBits), looked up by the next bits of the stream, is a
// value<<16 | extra bits<<12 | flags | its code's length, or (entrySub set) the start
// of a second-level table in sub<<16 | the bits that table is indexed by (after the
// first bits); entries of sub are as
// main's direct ones. The value is the symbol's (for codeLengths), a literal's byte,
// a length's or a distance's base, whose extra bits follow the code; for an entry of
// two literals (entryTwo), the first's byte | the second's<<8, the length both codes'.
// An entry of length 0 is a bit string no code begins with (none, when the code is
// complete).
type huffTable struct {
	main [1 << litTableBits]uint32
	sub  []uint32
}

// An entry's flags: entrySub leads to a second-level table; entryLit is a literal,
// entryEnd the end of a block, entryBad a symbol that has no meaning (286, 287, and
// distances 30 and 31: the stream reader's to refuse). entryTwo, of a literal's entry
// (which has no extra bits, where it is), says it holds two literals.
const (
	entrySub = 1 << 8
	entryLit = 1 << 9
	entryEnd = 1 << 10
	entryBad = 1 << 11
	entryTwo = 1 << 12
)

// lenMask takes an entry's length (15 at most; a second-level table's bits) out of it:
// 63 rather than 0xff, so that the compiler knows a shift by it is less than 64 and
// checks nothing (a shift past 63 is 0 in Go, which costs two instructions more).
const lenMask = 63

// What a table's symbols are, for their entries.
const (
	codeLengths = iota // the code lengths' code: the symbol itself
	litLengths         // literals, the end of block and lengths
	distances
)

// entryOf is the entry of symbol s of a code of kind, whose code is n bits long.
func entryOf(kind, s, n int) uint32 {
	e := uint32(n)
	switch {
	case kind == codeLengths:
		return e | uint32(s)<<16
	case kind == litLengths && s < 256:
		return e | uint32(s)<<16 | entryLit
	case kind == litLengths && s == 256:
		return e | entryEnd
	case kind == litLengths && s-257 < len(lengthBase):
		return e | uint32(lengthBase[s-257])<<16 | uint32(lengthBits[s-257])<<12
	case kind == distances && s < len(distBase):
		return e | uint32(distBase[s])<<16 | uint32(distBits[s])<<12
	}
	return e | entryBad
}

// fill tops the bit buffer up to at least 56 bits (63 at most: block's refill shifts
// by nb) while in has bytes left: eight bytes at a time, those near the end one at a
// time.
func (d *inflater) fill() {
	if d.nb >= 56 {
		return
	}
	if d.pos+8 <= len(d.in) {
		k := (63 - d.nb) >> 3 // whole bytes with room in the buffer: 0 (at 56) to 7
		w := binary.LittleEndian.Uint64(d.in[d.pos:])
		d.bits |= (w & (1<<(8*k) - 1)) << d.nb
		d.pos += int(k)
		d.nb += 8 * k
		return
	}
	for d.nb < 56 && d.pos < len(d.in) {
		d.bits |= uint64(d.in[d.pos]) << d.nb
		d.pos++
		d.nb += 8
	}
}

// take consumes and returns the next n bits (n ≤ 32), false when the data has fewer.
func (d *inflater) take(n uint) (uint32, bool) {
	if d.nb < n {
		d.fill()
		if d.nb < n {
			return 0, false
		}
	}
	v := uint32(d.bits & (1<<n - 1))
	d.bits >>= n
	d.nb -= n
	return v, true
}

// clSym decodes the next symbol of the code lengths' code, d.cl (no second level);
// false when the bits are no code's or the data ends within it. The buffer must hold 7
// bits, or all the data has left.
func (d *inflater) clSym() (int, bool) {
	e := d.cl.main[d.bits&(1<<clTableBits-1)]
	n := uint(e & lenMask)
	if n == 0 || n > d.nb {
		return 0, false
	}
	d.bits >>= n
	d.nb -= n
	return int(e >> 16), true
}

// init builds t for a code of kind of these lengths (0: a symbol without a code); false
// when the code is not complete (over- or under-subscribed: the stream reader decides
// those), but for a distance code of one symbol, of one bit: RFC 1951 (3.2.7) allows
// it, the stream reader reads it, and BestSpeed writes it for a block without matches
// (one of the 131 of the 100,000-deployment bundle, a third of a generated world's),
// which inflateBlock gave up on. The bit string that is no code's is a bad entry.
func (t *huffTable) init(lengths []uint8, kind int) bool {
	var count [16]int
	maxLen := 0
	for _, l := range lengths {
		count[l]++
		maxLen = max(maxLen, int(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	oneBit := kind == distances && maxLen == 1 && count[1] == 1
	if left != 0 && !oneBit {
		return false
	}
	var next [16]int
	code := 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	tb := tableBits(kind)
	main := t.main[:1<<tb]
	clear(main)
	t.sub = t.sub[:0]
	subBits := max(maxLen-tb, 0)
	for s, l := range lengths {
		if l == 0 {
			continue
		}
		n := int(l)
		rev := int(bits.Reverse16(uint16(next[n])) >> (16 - n))
		next[n]++
		e := entryOf(kind, s, n)
		if n <= tb {
			for i := rev; i < len(main); i += 1 << n {
				main[i] = e
			}
			continue
		}
		prefix := rev & (1<<tb - 1)
		head := main[prefix]
		if head&entrySub == 0 {
			head = uint32(len(t.sub))<<16 | entrySub | uint32(subBits)
			main[prefix] = head
			t.sub = append(t.sub, make([]uint32, 1<<subBits)...)
		}
		base, rest := int(head>>16), rev>>tb
		for i := rest; i < 1<<subBits; i += 1 << (n - tb) {
			t.sub[base+i] = e
		}
	}
	if oneBit { // the code's is 0; 1 is no code's
		for i := 1; i < len(main); i += 2 {
			main[i] = entryBad
		}
	}
	if kind == litLengths {
		t.pairLiterals()
	}
	return true
}

// pairLiterals makes each entry of main whose bits hold two literals' codes, one after
// the other, an entry of both (entryTwo): the inflater then writes two bytes for one
// lookup. The entry of the bits after the first code is main[i>>l], the bits past
// litTableBits zero, which is the second code's when it is short enough to end within
// litTableBits; main is read from the top down, so that entry is still one literal's.
func (t *huffTable) pairLiterals() {
	for i := len(t.main) - 1; i >= 0; i-- {
		e := t.main[i]
		if e&entryLit == 0 {
			continue
		}
		l := e & lenMask
		next := t.main[i>>l]
		if next&entryLit == 0 || l+next&lenMask > litTableBits {
			continue
		}
		t.main[i] = (e>>16|next>>16<<8)<<16 | entryLit | entryTwo | (l + next&lenMask)
	}
}

// fastRoom is the room block's first loop keeps in out for a round: what its literals
// write (three entries, six bytes, before a match; or four entries and one byte past
// them) and what a match's copy writes (sixteen bytes, or eight at a time to its length
// and up to seven past it: 264 bytes for a length of 257 or 258): 6 + 264 = 270 bytes at
// most, four short of fastRoom. TestInflateBlockEndsAtTheBuffersEdge fails at 258 + 11.
const fastRoom = 258 + 16

// The lengths' and distances' bases and extra bits (RFC 1951, 3.2.5), by symbol.
var (
	lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthBits = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase   = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distBits   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// codeOrder is the order in which a dynamic block gives its code length code's lengths.
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// fixedLit and fixedDist are the fixed codes' tables (RFC 1951, 3.2.6).
var fixedLit, fixedDist = func() (*huffTable, *huffTable) {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var dl [32]uint8
	for i := range dl {
		dl[i] = 5
	}
	lit, dist := new(huffTable), new(huffTable)
	lit.init(l[:], litLengths)
	dist.init(dl[:], distances)
	return lit, dist
}()

// stream inflates the whole stream: the text's length, or false (see inflateBlock).
func (d *inflater) stream() (int, bool) {
	for {
		h, ok := d.take(3)
		if !ok {
			return 0, false
		}
		var lit, dist *huffTable
		switch h >> 1 {
		case 0:
			if !d.stored() {
				return 0, false
			}
		case 1:
			lit, dist = fixedLit, fixedDist
		case 2:
			if !d.codes() {
				return 0, false
			}
			lit, dist = &d.lit, &d.dist
		default: // the reserved type: the stream reader's to refuse
			return 0, false
		}
		if lit != nil && !d.block(lit, dist) {
			return 0, false
		}
		if h&1 != 0 { // the last block: the stream must end with the data
			if d.pos-int(d.nb>>3) != len(d.in) {
				return 0, false
			}
			return d.n, true
		}
	}
}

// stored copies a stored block's bytes (a flush ends with an empty one).
func (d *inflater) stored() bool {
	d.bits >>= d.nb & 7 // to the next byte
	d.nb -= d.nb & 7
	size, ok1 := d.take(16)
	nsize, ok2 := d.take(16)
	if !(ok1 && ok2) || size != ^nsize&0xffff {
		return false
	}
	// the buffer's whole bytes are given back: the bytes are copied from in
	d.pos -= int(d.nb >> 3)
	d.bits, d.nb = 0, 0
	if int(size) > len(d.in)-d.pos || int(size) > len(d.out)-d.n {
		return false
	}
	d.n += copy(d.out[d.n:], d.in[d.pos:d.pos+int(size)])
	d.pos += int(size)
	return true
}

// codes reads a dynamic block's codes into d.lit and d.dist.
func (d *inflater) codes() bool {
	hlit, ok1 := d.take(5)
	hdist, ok2 := d.take(5)
	hclen, ok3 := d.take(4)
	if !(ok1 && ok2 && ok3) {
		return false
	}
	nlit, ndist := int(hlit)+257, int(hdist)+1
	if nlit > 286 || ndist > 30 {
		return false
	}
	var cl [19]uint8
	for i := range int(hclen) + 4 {
		v, ok := d.take(3)
		if !ok {
			return false
		}
		cl[codeOrder[i]] = uint8(v)
	}
	if !d.cl.init(cl[:], codeLengths) {
		return false
	}
	var lengths [286 + 30]uint8
	all := lengths[:nlit+ndist]
	for i := 0; i < len(all); {
		d.fill()
		s, ok := d.clSym()
		if !ok {
			return false
		}
		if s < 16 {
			all[i] = uint8(s)
			i++
			continue
		}
		var rep int
		var v uint8
		switch s {
		case 16:
			if i == 0 {
				return false
			}
			x, ok := d.take(2)
			if !ok {
				return false
			}
			rep, v = 3+int(x), all[i-1]
		case 17:
			x, ok := d.take(3)
			if !ok {
				return false
			}
			rep = 3 + int(x)
		default:
			x, ok := d.take(7)
			if !ok {
				return false
			}
			rep = 11 + int(x)
		}
		if i+rep > len(all) {
			return false
		}
		for range rep {
			all[i] = v
			i++
		}
	}
	if all[256] == 0 {
		return false
	}
	return d.lit.init(all[:nlit], litLengths) && d.dist.init(all[nlit:], distances)
}

// block inflates one compressed block's symbols, to its end of block. It is fill and
// the tables' lookups written out, on local copies of the bit buffer and positions
// (kept in registers).
func (d *inflater) block(lit, dist *huffTable) bool {
	in, out := d.in, d.out
	pos, n := d.pos, d.n
	bb, nb := d.bits, d.nb
	// Most of a block is read by this first loop, which checks less. While sixteen bytes
	// of data are left, each refill (two at most a round) reads eight whole bytes into
	// the buffer, unmasked: it then holds 64 bits of the stream, nb of them counted
	// (56 to 63), and a lookup reads the bits it needs whether they are counted or not;
	// the uncounted ones, the stream's own, are read again by the next refill, which
	// ORs the same bits onto them. A round reads up to four entries of literals (44 bits,
	// each looked up as soon as the one before is consumed), or a length's code and
	// extra bits and a distance's (48 at most, after a refill of their own), so it leaves
	// 16 bits or more of the 64 for the next round's first lookup, which is made before
	// that round's refill and so need not wait for it. While out has room for a round's
	// match or literals, no write checks for it; the codes are complete (init), so every
	// entry has a length (but a distance's bad ones, on which it gives up). The rest is
	// read by the loop after it, which checks all. The input's guard, sixteen bytes, is
	// pinned by tests that give the data no capacity past its end (Go checks a slice
	// expression against the capacity): TestInflateBlockReadsNothingPastItsInput and
	// FuzzInflateBlock's seed guard-12-reads-past-the-end fail with twelve or fewer.
	if pos+8 <= len(in) { // the first round's lookup's bits
		bb |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (nb & 63)
		pos += int((63 - nb) >> 3)
		nb |= 56
	}
	for pos+16 <= len(in) && n <= len(out)-fastRoom {
		e := lit.main[bb&(1<<litTableBits-1)]
		bb |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (nb & 63)
		pos += int((63 - nb) >> 3)
		nb |= 56
		if e&entryLit != 0 {
			// up to four entries of literals (44 bits), one or two bytes each: two bytes
			// are written, the second written again after a lone literal
			binary.LittleEndian.PutUint16(out[n:n+2], uint16(e>>16))
			n += 1 + int(e>>12&1)
			bb >>= e & lenMask
			nb -= uint(e & lenMask)
			e = lit.main[bb&(1<<litTableBits-1)]
			if e&entryLit == 0 {
				goto notLiteral
			}
			binary.LittleEndian.PutUint16(out[n:n+2], uint16(e>>16))
			n += 1 + int(e>>12&1)
			bb >>= e & lenMask
			nb -= uint(e & lenMask)
			e = lit.main[bb&(1<<litTableBits-1)]
			if e&entryLit == 0 {
				goto notLiteral
			}
			binary.LittleEndian.PutUint16(out[n:n+2], uint16(e>>16))
			n += 1 + int(e>>12&1)
			bb >>= e & lenMask
			nb -= uint(e & lenMask)
			e = lit.main[bb&(1<<litTableBits-1)]
			if e&entryLit == 0 {
				goto notLiteral
			}
			binary.LittleEndian.PutUint16(out[n:n+2], uint16(e>>16))
			n += 1 + int(e>>12&1)
			bb >>= e & lenMask
			nb -= uint(e & lenMask)
			continue
		notLiteral:
			// a length (or the end, or a longer code's table): its bits, and the
			// distance's, need a refill; the entry stays the bits' own
			bb |= binary.LittleEndian.Uint64(in[pos:pos+8]) << (nb & 63)
			pos += int((63 - nb) >> 3)
			nb |= 56
		}
		if e&entrySub != 0 {
			e = lit.sub[int(e>>16)+int((bb>>litTableBits)&(1<<(e&lenMask)-1))]
			if e&entryLit != 0 {
				out[n] = byte(e >> 16)
				n++
				bb >>= e & lenMask
				nb -= uint(e & lenMask)
				continue
			}
		}
		bb >>= e & lenMask
		nb -= uint(e & lenMask)
		if e&(entryEnd|entryBad) != 0 {
			d.pos, d.n, d.bits, d.nb = pos, n, bb, nb
			return e&entryEnd != 0
		}
		eb := uint(e>>12) & 0xf
		length := int(e>>16) + int(bb&(1<<eb-1))
		bb >>= eb
		nb -= eb
		e = dist.main[bb&(1<<distTableBits-1)]
		if e&entrySub != 0 {
			e = dist.sub[int(e>>16)+int((bb>>distTableBits)&(1<<(e&lenMask)-1))]
		}
		if e&entryBad != 0 {
			d.pos, d.n, d.bits, d.nb = pos, n, bb, nb
			return false
		}
		bb >>= e & lenMask
		nb -= uint(e & lenMask)
		eb = uint(e>>12) & 0xf
		distance := int(e>>16) + int(bb&(1<<eb-1))
		bb >>= eb
		nb -= eb
		if distance > n {
			d.pos, d.n, d.bits, d.nb = pos, n, bb, nb
			return false
		}
		from, end := n-distance, n+length
		if distance >= 8 {
			// sixteen bytes whatever the length (most are that short), then the rest
			binary.LittleEndian.PutUint64(out[n:n+8], binary.LittleEndian.Uint64(out[from:from+8]))
			binary.LittleEndian.PutUint64(out[n+8:n+16], binary.LittleEndian.Uint64(out[from+8:from+16]))
			for n, from = n+16, from+16; n < end; n, from = n+8, from+8 {
				binary.LittleEndian.PutUint64(out[n:n+8], binary.LittleEndian.Uint64(out[from:from+8]))
			}
			n = end
			continue
		}
		for n < end {
			n += copy(out[n:end], out[from:n])
		}
	}
	ok := false
	for {
		// 56 bits hold a length's code and extra bits and a distance's (48 at most)
		if nb < 56 {
			if pos+8 <= len(in) {
				k := (63 - nb) >> 3
				bb |= (binary.LittleEndian.Uint64(in[pos:]) & (1<<(8*k) - 1)) << nb
				pos += int(k)
				nb += 8 * k
			} else {
				for nb < 56 && pos < len(in) {
					bb |= uint64(in[pos]) << nb
					pos++
					nb += 8
				}
			}
		}
		e := lit.main[bb&(1<<litTableBits-1)]
		if e&entrySub != 0 {
			e = lit.sub[int(e>>16)+int((bb>>litTableBits)&(1<<(e&lenMask)-1))]
		}
		l := uint(e & lenMask)
		if l == 0 || l > nb {
			break
		}
		bb >>= l
		nb -= l
		if e&entryLit != 0 {
			// one literal, or two (entryTwo)
			k := 1 + int(e>>12&1)
			if k > len(out)-n {
				break
			}
			out[n] = byte(e >> 16)
			if k == 2 {
				out[n+1] = byte(e >> 24)
			}
			n += k
			continue
		}
		if e&(entryEnd|entryBad) != 0 {
			ok = e&entryEnd != 0
			break
		}
		// a length, its extra bits after its code
		eb := uint(e>>12) & 0xf
		if nb < eb {
			break
		}
		length := int(e>>16) + int(bb&(1<<eb-1))
		bb >>= eb
		nb -= eb
		e = dist.main[bb&(1<<distTableBits-1)]
		if e&entrySub != 0 {
			e = dist.sub[int(e>>16)+int((bb>>distTableBits)&(1<<(e&lenMask)-1))]
		}
		l = uint(e & lenMask)
		if l == 0 || l > nb || e&entryBad != 0 {
			break
		}
		bb >>= l
		nb -= l
		eb = uint(e>>12) & 0xf
		if nb < eb {
			break
		}
		distance := int(e>>16) + int(bb&(1<<eb-1))
		bb >>= eb
		nb -= eb
		if distance > n || length > len(out)-n {
			break
		}
		from := n - distance
		if distance >= 8 && len(out)-n >= length+8 {
			// eight bytes at a time, each read where it is final: past the match's end
			// up to seven bytes are written that what comes next writes again
			end := n + length
			for ; n < end; n, from = n+8, from+8 {
				binary.LittleEndian.PutUint64(out[n:], binary.LittleEndian.Uint64(out[from:]))
			}
			n = end
			continue
		}
		for end := n + length; n < end; {
			n += copy(out[n:end], out[from:n])
		}
	}
	d.pos, d.n, d.bits, d.nb = pos, n, bb, nb
	return ok
}
