package bundle

import (
	"bytes"
	stdflate "compress/flate"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
)

// The fast loop reads its input eight bytes at a time, unmasked, while sixteen are
// left (block's input guard): it never reads past the data's end. Go checks a slice
// expression against the capacity, not the length, so each stream is given with no
// capacity past its end, and out has room to spare, so that the fast loop stops for
// the input's end, not out's. With a guard of 13 bytes or fewer, a round reads past the
// end and this panics (the other tests' data has room past its end, and their out
// stops the loop first).
func TestInflateBlockReadsNothingPastItsInput(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	words := []string{"deployment", "ready", `"id":"dpl_`, "\n", "0123456789", "abcdef", " ", `{"files":{`}
	count := 400
	if raceBuild {
		count = 80 // the bounds are Go's, the same under -race
	}
	for i := range count {
		n := 200 + r.IntN(6000)
		if i%4 == 3 {
			n = 20_000 + r.IntN(40_000) // matches far back: distances with 13 extra bits
		}
		var text bytes.Buffer
		for text.Len() < n {
			switch k := r.IntN(8); {
			case k < 2:
				text.WriteByte(byte(r.IntN(256))) // a literal of its own code
			case k == 2 && text.Len() > 300:
				// a long match from far back: a length with extra bits and a distance
				// with many
				from := r.IntN(text.Len() - 258)
				text.Write(bytes.Clone(text.Bytes()[from : from+3+r.IntN(255)]))
			default:
				text.WriteString(words[r.IntN(len(words))])
			}
		}
		level := []int{flate.HuffmanOnly, 1, 2, 4, 6, 9}[i%6]
		var data []byte
		if i%5 == 4 {
			data = deflated(text.Bytes(), []int{stdflate.BestSpeed, stdflate.DefaultCompression, stdflate.HuffmanOnly}[i%3], true)
		} else {
			data = deflated(text.Bytes(), level, false)
		}
		data = bytes.Clone(data)
		data = data[:len(data):len(data)]
		out := make([]byte, text.Len()+4096)
		var got int
		var ok bool
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("text %d (%d bytes, level %d): panic: %v", i, text.Len(), level, p)
				}
			}()
			got, ok = inflateBlock(out, data)
		}()
		if ok && !bytes.Equal(out[:got], text.Bytes()) {
			t.Fatalf("text %d: %s", i, fmt.Sprintf("%d bytes read, not the text's %d", got, text.Len()))
		}
	}
}
