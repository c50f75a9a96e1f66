package state_test

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// BenchmarkReadSnapshot100k: ReadSnapshot of the state document of the world of
// testdata/big/generate-100k.yaml (100,000 deployments, 137 MB of JSON), from memory:
// the decoding `hostemu replay`, PUT /_emulator/state and --state do, without the
// decompression around it.
//
//	go test -run '^$' -bench ReadSnapshot100k -benchmem ./emulator/internal/state/
func BenchmarkReadSnapshot100k(b *testing.B) {
	doc := bigStateDoc(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := state.ReadSnapshot(bytes.NewReader(doc), state.ReadOptions{})
		if err != nil || len(got.Deployments) != 100_000 {
			b.Fatal(len(got.Deployments), err)
		}
	}
}

// BenchmarkLoad100k: Store.Load of that world (the check and the maps and indexes a
// replay, a state import and --fixtures build), each time from a snapshot read afresh.
//
//	go test -run '^$' -bench Load100k -benchmem ./emulator/internal/state/
func BenchmarkLoad100k(b *testing.B) {
	doc := bigStateDoc(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		got, err := state.ReadSnapshot(bytes.NewReader(doc), state.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		s := state.New()
		runtime.GC() // the read's and the last load's garbage: not this load's to collect
		b.StartTimer()
		if err := s.Load(got); err != nil {
			b.Fatal(err)
		}
	}
}

// bigStateDoc is the state document of the world of testdata/big/generate-100k.yaml,
// the snapshot it was written from left to the collector.
func bigStateDoc(b *testing.B) []byte {
	b.Helper()
	snap, problems := fixture.Load("../../testdata/big/generate-100k.yaml", fixture.Options{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	var doc bytes.Buffer
	if err := state.WriteSnapshot(&doc, &snap, ""); err != nil {
		b.Fatal(err)
	}
	return doc.Bytes()
}
