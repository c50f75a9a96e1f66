package bundle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
)

// blockStarts are the offsets of the blocks in an archive.
func blockStarts(tgz []byte) []int {
	var at []int
	for i := 0; i+blockHeaderSize <= len(tgz); i++ {
		if bytes.Equal(tgz[i:i+len(blockHeader)], blockHeader[:]) {
			at = append(at, i)
		}
	}
	return at
}

// state.json is written as blocks of at most blockSize bytes of text, which Read
// inflates several at once, into the state written.
func TestStateIsWrittenInBlocks(t *testing.T) {
	b, tgz := big(t)
	if n := len(blockStarts(tgz)); n < 3 {
		t.Fatalf("%d blocks", n)
	}
	got, err := Read(bytes.NewReader(tgz), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.State.Deployments) != len(b.State.Deployments) || got.State.Deployments[2999].Logs[19].Text != b.State.Deployments[2999].Logs[19].Text {
		t.Fatalf("%d deployments read back", len(got.State.Deployments))
	}
}

// handBlock is a block of text as blockWriter writes it, its trailer's length and
// CRC-32 given.
func handBlock(text []byte, size, crc uint32) []byte { return handBlockOf(text, size, crc, true) }

// handBlockOf is handBlock whose deflate stream is ended by its final block when closed,
// or only flushed (cut before its end, which gzip refuses) when not.
func handBlockOf(text []byte, size, crc uint32, closed bool) []byte {
	var data bytes.Buffer
	fw, _ := flate.NewWriter(&data, flate.BestSpeed)
	fw.Write(text)
	if closed {
		fw.Close()
	} else {
		fw.Flush()
	}
	out := append(blockHeader[:], binary.LittleEndian.AppendUint32(nil, uint32(data.Len()))...)
	out = append(out, data.Bytes()...)
	out = binary.LittleEndian.AppendUint32(out, crc)
	return binary.LittleEndian.AppendUint32(out, size)
}

// A block that lies — about its data's length, its text's length or CRC-32, or that
// inflates past blockSize — is refused as a corrupt archive, never read past.
func TestCorruptBlocksAreRefused(t *testing.T) {
	_, tgz := big(t)
	at := blockStarts(tgz)
	first, second := at[0], at[1]
	text := bytes.Repeat([]byte("x"), blockSize+1)
	replace := func(block []byte) []byte { // the first block replaced
		return append(append(append([]byte(nil), tgz[:first]...), block...), tgz[second:]...)
	}
	for name, bad := range map[string][]byte{
		"a byte of its data flipped": func() []byte {
			c := bytes.Clone(tgz)
			c[first+blockHeaderSize+100] ^= 0xff
			return c
		}(),
		"its data's length over the bound": func() []byte {
			c := bytes.Clone(tgz)
			binary.LittleEndian.PutUint32(c[first+blockHeaderSize-4:], maxBlockData+1)
			return c
		}(),
		"its data's length one short": func() []byte {
			c := bytes.Clone(tgz)
			n := binary.LittleEndian.Uint32(c[first+blockHeaderSize-4:])
			binary.LittleEndian.PutUint32(c[first+blockHeaderSize-4:], n-1)
			return c
		}(),
		"its CRC-32 wrong":         replace(handBlock(text[:blockSize], blockSize, 1)),
		"its length wrong":         replace(handBlock(text[:blockSize], blockSize-1, crc32.ChecksumIEEE(text[:blockSize]))),
		"inflating past blockSize": replace(handBlock(text, blockSize+1, crc32.ChecksumIEEE(text))),
		// its text, CRC-32 and length right, but its deflate stream cut before its end
		"its stream not ended": replace(handBlockOf(text[:100], 100, crc32.ChecksumIEEE(text[:100]), false)),
	} {
		_, err := Read(bytes.NewReader(bad), ReadOptions{})
		var be *Error
		// as a corrupt single member in state.json is: the state's reader names it
		if !errors.As(err, &be) || !(strings.HasPrefix(err.Error(), "state.json: gzip: ") || strings.HasPrefix(err.Error(), "state.json: flate: ")) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The blocks are read into the same state whatever the number of cores: none but the
// reader on one core, one inflater beside the reader (which inflates too when its next
// block is not ready), or several.
func TestBlocksReadAlikeOnAnyCores(t *testing.T) {
	_, tgz := big(t)
	want, err := Read(bytes.NewReader(tgz), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		got, err := Read(bytes.NewReader(tgz), ReadOptions{})
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
		if !reflect.DeepEqual(got.State, want.State) {
			t.Errorf("GOMAXPROCS %d: another state read", procs)
		}
	}
}

// A reader that stops after a few bytes leaves no block waiting for an inflater: each
// block it started is inflated (an inflater ends only once none waits), so nothing it
// started is left behind half done.
func TestBlocksStartedAreInflatedWhenTheReaderStops(t *testing.T) {
	_, tgz := big(t)
	at := blockStarts(tgz)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	goroutines := runtime.NumGoroutine()
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		bs := &blocks{br: bufio.NewReader(bytes.NewReader(tgz[at[0]:])), more: true}
		if n, err := bs.Read(make([]byte, 10)); n != 10 || err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		want := blocksInFlight
		if procs == 1 {
			want = 1 // no inflater: the reader inflates each block as it comes to it
		}
		if len(bs.pending) != want {
			t.Fatalf("GOMAXPROCS=%d: %d blocks started, want %d", procs, len(bs.pending), want)
		}
		for _, b := range bs.pending {
			select {
			case <-b.done: // never closed if an inflater ended with a block waiting
			case <-time.After(time.Minute):
				t.Fatalf("GOMAXPROCS=%d: a block started was never inflated", procs)
			}
			if b.err != nil {
				t.Fatal(b.err)
			}
		}
	}
	// the inflaters end once the queue is empty
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > goroutines; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines a minute after the reader stopped, %d before", runtime.NumGoroutine(), goroutines)
		}
		runtime.Gosched()
	}
}
