package bundle

import (
	"bytes"
	"flag"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// inflateText names a file whose text BenchmarkInflateBlocks inflates instead of a
// generated world's: a bundle's state.json, extracted, for lab numbers on the real
// thing (go test -bench InflateBlocks -args -inflate.text=state.json).
var inflateText = flag.String("inflate.text", "", "a state.json for BenchmarkInflateBlocks (default: a generated world's)")

// benchBlocks is the deflate data of a state.json's blocks, compressed as blockWriter
// compresses them, and the length of their text.
var benchBlocks = sync.OnceValues(func() ([][]byte, int) {
	text := []byte(nil)
	if *inflateText != "" {
		var err error
		if text, err = os.ReadFile(*inflateText); err != nil {
			panic(err)
		}
	} else {
		text = generatedStateText()
	}
	var blocks [][]byte
	for rest := text; len(rest) > 0; {
		chunk := rest[:min(len(rest), blockSize)]
		rest = rest[len(chunk):]
		in := blockOf(chunk, flate.BestSpeed)
		blocks = append(blocks, in[blockHeaderSize:len(in)-blockTrailerSize])
	}
	return blocks, len(text)
})

// generatedStateText is the state.json of a generated world of 4,000 deployments
// (about 5 MB): what a bundle of a generated world holds, shaped as the replay's.
func generatedStateText() []byte {
	f, problems := fixture.Parse("f.yaml", []byte("generate: {projects: 40, deployments_per_project: 100, domains_per_project: 2}\n"))
	if len(problems) > 0 {
		panic(problems)
	}
	snap, problems := fixture.Build([]*fixture.File{f}, fixture.Options{Seed: 1, Start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)})
	if len(problems) > 0 {
		panic(problems)
	}
	var buf bytes.Buffer
	if err := state.WriteSnapshot(&buf, &snap, ""); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// BenchmarkInflateBlocks inflates a state.json's blocks one after the other, as one
// inflater goroutine does: with inflateBlock, and with the stream reader what it gives
// up on (fallbacks/op, 0 for a bundle's blocks); MB/s is of text. The CRC-32 and the
// goroutines are left out.
func BenchmarkInflateBlocks(b *testing.B) {
	blocks, size := benchBlocks()
	out := make([]byte, blockSize+1)
	fallbacks := 0
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, data := range blocks {
			if _, ok := inflateBlock(out, data); ok {
				continue
			}
			fallbacks++
			fr := flate.NewReader(bytes.NewReader(data))
			if _, err := io.ReadFull(fr, out[:blockSize]); err != nil && err != io.ErrUnexpectedEOF {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(fallbacks)/float64(b.N), "fallbacks/op")
}
