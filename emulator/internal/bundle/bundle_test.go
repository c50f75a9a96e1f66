package bundle

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// small is a minimal valid bundle.
func small(t testing.TB) []byte {
	now := time.Date(2026, 1, 1, 0, 0, 6, 0, time.UTC)
	b := &Bundle{
		Manifest: Manifest{HostemuVersion: "test", CreatedAt: now, Seed: 1, Scenario: "default",
			Clock: Clock{Mode: "manual", Now: now}, RateLimits: "on", EdgeDomain: "hostemu.localhost", CORSOrigins: []string{"*"}},
		State:     state.Snapshot{Tokens: []state.Token{{Token: "t", Scope: state.ScopeRead}}},
		Faults:    fault.Saved{Faults: []fault.SavedFault{}, Scenario: []fault.SavedCount{}, Next: 1},
		Journal:   []journal.Entry{{Seq: 1, Method: "GET", Path: "/v1/projects", Status: 200, Time: now}},
		Events:    []events.Recorded{{Seq: 1, Type: "clock", Data: map[string]string{"mode": "manual"}}},
		Scenarios: map[string][]byte{"default": []byte("name: default\n")},
		Files:     map[string][]byte{"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824": []byte("hello")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, b, DefaultFilesBytes); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteThenRead(t *testing.T) {
	b, err := Read(bytes.NewReader(small(t)), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.Format != Format || b.Manifest.Files.Included != 1 || len(b.Journal) != 1 || len(b.Events) != 1 || len(b.State.Tokens) != 1 {
		t.Fatalf("read back: %+v", b.Manifest)
	}
	if _, ok := b.Files["2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"]; !ok {
		t.Fatal("files/ not checked (its contents are not kept: state.json holds them)")
	}
}

func TestWriteOmitsFilesOverTheBound(t *testing.T) {
	now := time.Now()
	var buf bytes.Buffer
	b := &Bundle{Manifest: Manifest{CreatedAt: now, Scenario: "default", Clock: Clock{Mode: "manual", Now: now}, RateLimits: "on"},
		Scenarios: map[string][]byte{"default": []byte("x")},
		Files:     map[string][]byte{"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824": []byte("hello")}}
	if err := Write(&buf, b, 3); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f := got.Manifest.Files; f.Included != 0 || len(f.Omitted) != 1 || f.Omitted[0].Bytes != 5 || len(got.Files) != 0 {
		t.Fatalf("files: %+v", f)
	}
}

// FuzzRead: whatever the bytes, Read never panics, and fails only with an *Error.
func FuzzRead(f *testing.F) {
	good := small(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Read(bytes.NewReader(data), ReadOptions{MaxBytes: 1 << 20})
		var be *Error
		if err != nil && !errors.As(err, &be) {
			t.Fatalf("an error that is not a bundle.Error: %T %v", err, err)
		}
	})
}
