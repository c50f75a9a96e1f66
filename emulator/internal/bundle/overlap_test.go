package bundle

import (
	"archive/tar"
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// big is a bundle whose state.json is several of the goroutines' chunks long.
func big(t testing.TB) (*Bundle, []byte) {
	now := time.Date(2026, 1, 1, 0, 0, 6, 0, time.UTC)
	snap := state.Snapshot{}
	for i := range 3000 {
		d := state.Deployment{ID: fmt.Sprintf("dpl_%d", i), ProjectID: "prj_1", Status: state.StatusReady, CreatedAt: now}
		for j := range 20 {
			d.Logs = append(d.Logs, state.LogLine{CreatedAt: now, Text: fmt.Sprintf("step %d of deployment %d: <building> \"the\" bundle", j, i)})
		}
		snap.Deployments = append(snap.Deployments, d)
	}
	b := &Bundle{
		Manifest:  Manifest{CreatedAt: now, Scenario: "default", Clock: Clock{Mode: "manual", Now: now}, RateLimits: "on"},
		State:     snap,
		Faults:    fault.Saved{Faults: []fault.SavedFault{}, Scenario: []fault.SavedCount{}, Next: 1},
		Scenarios: map[string][]byte{"default": []byte("name: default\n")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, b, DefaultFilesBytes); err != nil {
		t.Fatal(err)
	}
	return b, buf.Bytes()
}

// The archive's gzip members read as one stream with any gzip reader (the standard
// library's here, and tar's when the machine has it), state.json whole in it.
func TestArchiveReadsAsOneStream(t *testing.T) {
	b, tgz := big(t)
	var want bytes.Buffer
	if err := state.WriteSnapshot(&want, &b.State, ""); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 3*chunkSize {
		t.Fatalf("state.json is %d bytes: not several chunks", want.Len())
	}
	gz, err := stdgzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == StateName && !bytes.Equal(data, want.Bytes()) {
			t.Fatalf("state.json: %d bytes, want %d", len(data), want.Len())
		}
	}
	if got := strings.Join(names, " "); got != "manifest.json state.json faults.json lifecycles.json journal.ndjson events.ndjson scenarios/default.yaml" {
		t.Fatalf("members: %s", got)
	}
	if _, err := exec.LookPath("tar"); err == nil {
		cmd := exec.Command("tar", "-tzf", "-")
		cmd.Stdin = bytes.NewReader(tgz)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "state.json") || !strings.Contains(string(out), "scenarios/default.yaml") {
			t.Fatalf("tar -tzf: %v\n%s", err, out)
		}
	}
	got, err := Read(iotest.HalfReader(bytes.NewReader(tgz)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.State.Deployments) != len(b.State.Deployments) {
		t.Fatalf("%d deployments read back", len(got.State.Deployments))
	}
}

// A failing writer behind: Write fails soon after, and Close says why.
func TestBehindWriterFails(t *testing.T) {
	boom := errors.New("disk full")
	w := newBehindWriter(failing{boom})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = w.Write(make([]byte, chunkSize))
	}
	if !errors.Is(err, errBehind) {
		t.Fatalf("Write kept going: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
}

type failing struct{ err error }

func (f failing) Write(p []byte) (int, error) { return 0, f.err }

// The reader ahead passes a cut stream's error on after its bytes, and stops when told
// to, mid-stream, without waiting for the stream's end.
func TestAheadReader(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), chunkSize)
	a := newAheadReader(io.MultiReader(bytes.NewReader(data[:3*chunkSize+5]), iotest.ErrReader(io.ErrUnexpectedEOF)))
	got, err := io.ReadAll(a)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, data[:3*chunkSize+5]) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	a.Stop()
	a = newAheadReader(bytes.NewReader(data))
	if _, err := io.ReadFull(a, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	a.Stop() // the goroutine is blocked handing on a chunk: it returns
	a.Stop()
}

// An archive cut anywhere is refused, a cut between two gzip members included (the tar
// then ends early, cleanly); what follows the last member and is not gzip is let be.
func TestCutArchivesAreRefused(t *testing.T) {
	_, large := big(t)
	for i, tgz := range [][]byte{small(t), large} {
		var cuts []int
		for i := 0; i+2 < len(tgz); i++ {
			if tgz[i] == 0x1f && tgz[i+1] == 0x8b && tgz[i+2] == 0x08 { // a member starts
				cuts = append(cuts, i-1, i, i+1, i+10, i+11)
			}
		}
		step := 1 // every cut of the small one, 20 of the large one
		if i > 0 {
			step = len(tgz) / 20
		}
		for n := 0; n < len(tgz); n += step {
			cuts = append(cuts, n)
		}
		cuts = append(cuts, len(tgz)-1)
		for _, n := range cuts {
			if n < 0 || n >= len(tgz) {
				continue
			}
			if _, err := Read(bytes.NewReader(tgz[:n]), ReadOptions{}); err == nil {
				t.Fatalf("the archive cut at %d of %d bytes was read", n, len(tgz))
			}
		}
	}
	var empty bytes.Buffer
	zw := stdgzip.NewWriter(&empty)
	zw.Close()
	for name, tail := range map[string][]byte{"a newline": []byte("\n"), "zeros": make([]byte, 600), "an empty gzip member": empty.Bytes(), "text": []byte("not gzip at all")} {
		if _, err := Read(bytes.NewReader(append(small(t), tail...)), ReadOptions{}); err != nil {
			t.Errorf("a bundle followed by %s: %v", name, err)
		}
	}
}

// Writing a bundle never holds its state's text: all it allocates, the compressor and
// the chunks between the two goroutines included, is a fraction of that text. (Not
// parallel: the count is the process's.)
func TestWriteAllocatesLessThanTheStatesText(t *testing.T) {
	b, _ := big(t)
	for range 3 { // 9,000 deployments
		b.State.Deployments = append(b.State.Deployments, b.State.Deployments...)
	}
	var text countingWriter
	if err := state.WriteSnapshot(&text, &b.State, ""); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var archive countingWriter
	if err := Write(&archive, b, DefaultFilesBytes); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("state.json %d MB, archive %d MB, allocated while writing %d MB", text.n>>20, archive.n>>20, allocated>>20)
	if allocated > text.n/2 {
		t.Fatalf("writing allocated %d bytes for a state of %d bytes of text", allocated, text.n)
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// A bundle of one gzip member (as written before blocks, or by any tar czf) reads as
// the same bundle in blocks: one member inflated ahead on its goroutine up to its end,
// then, for the bundle in blocks, the blocks read where they were inflated and the last
// member ahead again.
func TestOneMemberAndBlocksReadAlike(t *testing.T) {
	_, blocked := big(t)
	one := repack(t, blocked, nil)
	if bytes.Count(one, []byte{0x1f, 0x8b, 0x08}) >= bytes.Count(blocked, []byte{0x1f, 0x8b, 0x08}) {
		t.Fatal("the repacked archive is not of fewer members")
	}
	var states [2]string
	for i, tgz := range [][]byte{blocked, one} {
		b, err := Read(iotest.OneByteReader(bytes.NewReader(tgz)), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := state.WriteSnapshot(&text, &b.State, ""); err != nil {
			t.Fatal(err)
		}
		states[i] = text.String()
	}
	if states[0] != states[1] || len(states[0]) < 3*chunkSize {
		t.Fatalf("state.json: %d bytes in blocks, %d in one member", len(states[0]), len(states[1]))
	}
}
