package bundle

import (
	"bytes"
	stdflate "compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
)

// largeTexts are texts of about blockSize bytes whose ends inflateBlock's fast loop
// reaches with little room left in out: random bytes, runs, a state's JSON, and JSON
// that ends in long matches (the text's first 2 KiB again, then a run of one byte).
func largeTexts() []struct {
	name string
	text []byte
} {
	r := rand.New(rand.NewPCG(21, 21))
	random := make([]byte, blockSize)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	runs := make([]byte, 0, blockSize+4096)
	for len(runs) < blockSize {
		unit := make([]byte, 1+r.IntN(20))
		for i := range unit {
			unit[i] = byte('a' + r.IntN(26))
		}
		for range 1 + r.IntN(300) {
			runs = append(runs, unit...)
		}
	}
	json := stateText()
	for len(json) < blockSize {
		json = append(json, json[:min(len(json), blockSize-len(json))]...)
	}
	tail := bytes.Clone(json[:blockSize])
	copy(tail[blockSize-4096:], tail[:2048])
	for i := blockSize - 2048; i < blockSize; i++ {
		tail[i] = 'z'
	}
	return []struct {
		name string
		text []byte
	}{{"random", random}, {"runs", runs[:blockSize]}, {"json", json[:blockSize]}, {"json ending in matches", tail}}
}

// deflated is text's raw deflate stream: klauspost's at level (HuffmanOnly too), or
// (std) the standard library's.
func deflated(text []byte, level int, std bool) []byte {
	var data bytes.Buffer
	if std {
		fw, err := stdflate.NewWriter(&data, level)
		if err != nil {
			panic(err)
		}
		fw.Write(text)
		fw.Close()
		return data.Bytes()
	}
	fw, err := flate.NewWriter(&data, level)
	if err != nil {
		panic(err)
	}
	fw.Write(text)
	fw.Close()
	return data.Bytes()
}

// streamRead is what the stream reader reads of data, or nil on an error.
func streamRead(data []byte) []byte {
	text, err := io.ReadAll(flate.NewReader(bytes.NewReader(data)))
	if err != nil {
		return nil
	}
	return text
}

// inflatesAs says how inflateBlock, into out of the text's length and of up to sixteen
// bytes more (each over a buffer of garbage), differs from the text: "" when it gives
// the text or gives up, never a panic.
func inflatesAs(data, text []byte, extras []int) (diff string) {
	buf := make([]byte, len(text)+16)
	for _, extra := range extras {
		for i := range buf {
			buf[i] = 0xa5
		}
		out := buf[: len(text)+extra : len(text)+extra]
		func() {
			defer func() {
				if p := recover(); p != nil {
					diff = fmt.Sprintf("out of %d+%d bytes: panic: %v", len(text), extra, p)
				}
			}()
			if n, ok := inflateBlock(out, data); ok && !bytes.Equal(out[:n], text) {
				diff = fmt.Sprintf("out of %d+%d bytes: %d bytes of text, not the stream reader's %d", len(text), extra, n, len(text))
			}
		}()
		if diff != "" {
			return diff
		}
	}
	return ""
}

var allExtras = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// deflatedTail is the deflate stream of text, whose first len(prefix) bytes are
// prefix (deflated by the stream flushed), its rest deflated at level with the
// prefix as its dictionary: the text of a length near blockSize, deflated whole but for
// its tail, at the cost of its tail.
func deflatedTail(flushed, prefix, text []byte, level int) []byte {
	var data bytes.Buffer
	data.Write(flushed)
	fw, err := flate.NewWriterDict(&data, level, prefix)
	if err != nil {
		panic(err)
	}
	fw.Write(text[len(prefix):])
	fw.Close()
	return data.Bytes()
}

// inflateBlock reads texts of blockSize bytes, deflated at every level and by the
// standard library, and texts of blockSize-1 to blockSize-300 bytes, as the stream
// reader reads them (or gives up), with out just long enough for the text and up to
// sixteen bytes longer: its fast loop's last rounds run at every distance from out's end.
func TestInflateBlockLargeTextsAtTheBuffersEdge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	type writer struct {
		level int
		std   bool
	}
	writers := []writer{{flate.HuffmanOnly, false}, {1, false}, {2, false}, {3, false}, {4, false}, {5, false}, {6, false}, {7, false}, {8, false}, {9, false}, {stdflate.BestSpeed, true}, {stdflate.DefaultCompression, true}, {stdflate.HuffmanOnly, true}}
	for ti, lt := range largeTexts() {
		name, full := lt.name, lt.text
		if raceBuild && ti != 3 { // the JSON ending in matches
			continue
		}
		for wi, w := range writers {
			if raceBuild && w != (writer{1, false}) && w != (writer{flate.HuffmanOnly, false}) {
				continue
			}
			n := blockSize - []int{0, 0, 1, 258}[wi%4] // blockSize, and one or 258 short
			text := full[:n]
			data := deflated(text, w.level, w.std)
			extras := allExtras
			if w.level > 1 && !w.std || raceBuild { // three of the seventeen, drawn
				extras = []int{r.IntN(17), r.IntN(17), r.IntN(17)}
			}
			if diff := inflatesAs(data, text, extras); diff != "" {
				t.Fatalf("%s, %d bytes, level %d (std %v): %s", name, n, w.level, w.std, diff)
			}
			if w.level == 1 && name != "random" {
				if got, ok := inflateBlock(make([]byte, n), data); !ok || got != n {
					t.Errorf("%s, level 1 (std %v): inflateBlock gave up on it", name, w.std)
				}
			}
			if w == (writer{1, false}) && !bytes.Equal(streamRead(data), text) {
				t.Errorf("%s: the stream reader does not read the text", name)
			}
		}
		// blockSize-1 to blockSize-300: the first blockSize-512 bytes deflated at
		// BestSpeed and flushed, the rest at each level in turn
		prefix := full[:blockSize-512]
		var flushed bytes.Buffer
		fw, _ := flate.NewWriter(&flushed, 1)
		fw.Write(prefix)
		fw.Flush()
		for i := 1; i <= 300; i++ {
			// each length for the JSON ending in matches, every third for the JSON, every
			// seventh for the rest (under -race, every thirtieth of the first)
			if raceBuild && i%30 != 0 || !raceBuild && ti < 2 && i%7 != 0 || ti == 2 && i%3 != 0 {
				continue
			}
			text := full[:blockSize-i]
			level := []int{flate.HuffmanOnly, 1, 2, 3, 4, 5, 6, 7, 8, 9}[i%10]
			data := deflatedTail(flushed.Bytes(), prefix, text, level)
			if i%50 == 0 && !bytes.Equal(streamRead(data), text) {
				t.Fatalf("%s, %d bytes: the stream reader does not read the text", name, len(text))
			}
			if diff := inflatesAs(data, text, []int{r.IntN(17)}); diff != "" {
				t.Fatalf("%s, %d bytes, its tail at level %d: %s", name, len(text), level, diff)
			}
		}
	}
}

// edgeBlock is a dynamic block (its codes two bits long: a, b, the end, length 258;
// the distances' one bit: 1, and 9 to 12) of "abababab", matches of 258 at distance 1,
// k literals, a match of 258 at distance 9 (far) or 1, t literals and its end; then
// (padded) twenty empty blocks, so that the data outlasts the fast loop, or none. It
// returns the data and its text.
func edgeBlock(matches, k, t int, far, padded bool) ([]byte, []byte) {
	l := make([]int, 286)
	l['a'], l['b'], l[256], l[285] = 2, 2, 2, 2
	w := dynamic(286, 7, append(l, 1, 0, 0, 0, 0, 0, 1))
	if padded {
		w.out[0] &^= 1 // not the last block
	}
	text := []byte{}
	lit := func(i int) {
		w.code(uint64(i&1), 2)
		text = append(text, "ab"[i&1])
	}
	match := func(distance int) {
		w.code(3, 2)
		if distance == 1 {
			w.code(0, 1)
		} else {
			w.code(1, 1).bits(uint64(distance-9), 2)
		}
		for range 258 {
			text = append(text, text[len(text)-distance])
		}
	}
	for i := range 8 {
		lit(i)
	}
	for range matches {
		match(1)
	}
	for i := range k {
		lit(i)
	}
	if far {
		match(9)
	} else {
		match(1)
	}
	for i := range t {
		lit(i)
	}
	w.code(2, 2)
	if padded {
		for range 20 {
			w.bits(0, 1).bits(1, 2).fixed(256)
		}
		w.bits(1, 1).bits(1, 2).fixed(256)
	}
	return w.bytes(), text
}

// Hand-made blocks whose last literals and matches end at every distance from out's
// end, out just long enough for the text and up to sixteen bytes longer: inflateBlock
// gives the text, never a panic (it may not give up: the data is well formed and out
// has room).
func TestInflateBlockEndsAtTheBuffersEdge(t *testing.T) {
	for _, far := range []bool{true, false} {
		for _, padded := range []bool{true, false} {
			for k := 0; k <= 8; k++ {
				for tail := 0; tail <= 300; tail++ {
					if !(far && padded) && tail%5 != 0 || raceBuild && (tail%23 != k || !padded) {
						continue
					}
					data, text := edgeBlock(6, k, tail, far, padded)
					if diff := inflatesAs(data, text, allExtras); diff != "" {
						t.Fatalf("far %v, padded %v, %d literals, a match, %d literals: %s", far, padded, k, tail, diff)
					}
					if n, ok := inflateBlock(make([]byte, len(text)), data); !ok || n != len(text) {
						t.Fatalf("far %v, padded %v, %d literals, a match, %d literals: gave up", far, padded, k, tail)
					}
					if k == 3 && tail%50 == 0 && !bytes.Equal(streamRead(data), text) {
						t.Fatalf("far %v, padded %v, %d, %d: the stream reader reads another text", far, padded, k, tail)
					}
				}
			}
		}
	}
	// the fast loop's last round (three entries of two literals and the match) at 275
	// bytes from the end of out of blockSize+1, as FuzzInflateBlock's seed
	for _, tail := range []int{10, 11} {
		data, text := edgeBlock(4063, 46, tail, true, tail == 10)
		if len(text) != blockSize+tail-10 {
			t.Fatalf("%d bytes", len(text))
		}
		if n, ok := inflateBlock(make([]byte, blockSize+1), data); !ok || n != len(text) {
			t.Fatalf("the seed of %d bytes: gave up", len(text))
		}
	}
	// and at blockSize: 4060 matches of 258 before the last ones
	for _, k := range []int{0, 3, 6, 7, 8} {
		for _, tail := range []int{0, 1, 7, 8, 15, 16, 17, 258, 273, 274, 275} {
			if raceBuild && tail != 273 {
				continue
			}
			data, text := edgeBlock(4060, k, tail, true, true)
			if len(text) > blockSize {
				t.Fatalf("%d bytes", len(text))
			}
			if diff := inflatesAs(data, text, []int{0, 1, 7, 8, 15, 16}); diff != "" {
				t.Fatalf("blockSize: %d literals, a match, %d literals: %s", k, tail, diff)
			}
		}
	}
}

// must is edgeBlock's data.
func must(data, _ []byte) []byte { return data }
