package world_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// BenchmarkRecord is the journal's hot path, which every request takes: with nobody
// subscribed to the events it must cost what it did before there were events.
func BenchmarkRecord(b *testing.B) {
	w := newWorld(b, project())
	e := journal.Entry{Method: "GET", Path: "/v1/projects", Status: 200, Scope: "read", Service: "hosting", Body: ""}
	b.ReportAllocs()
	for b.Loop() {
		w.Record(e)
	}
}
