package world_test

import (
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// BenchmarkCreateLifecycle is the world's part of a create and of the lifecycle it
// starts (queued, then building and ready as the clock moves): the create
// TestBinaryHotPaths sends (one file, one environment variable), 25 a millisecond
// of the manual clock (the binary's rate: creates in the same millisecond share
// created_at), their two steps fired as the clock moves (1 s and 6 s later), the last
// ones at the end. An op is one create with its two transitions, without HTTP, the
// journal or a real clock's readings:
//
//	GOMAXPROCS=1 go test -run '^$' -bench CreateLifecycle -benchtime 200000x ./emulator/internal/world/
func BenchmarkCreateLifecycle(b *testing.B) {
	w := newWorld(b, project())
	files := map[string]string{"index.html": "0000000000000000000000000000000000000000000000000000000000000000"}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		_, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: files,
			Target: ptr(state.TargetPreview), Env: map[string]string{"FEATURE": "on"}})
		if err != nil {
			b.Fatal(err)
		}
		if n++; n%25 == 0 {
			w.Advance(time.Millisecond)
		}
	}
	w.Advance(6 * time.Second)
}
