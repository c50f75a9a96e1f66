package world_test

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// A bundle whose state alone weighs more than --max-world-bytes allows is refused
// before the store's maps and indexes are built for it (they were built, then thrown
// away), with the error it had: the weight's, which comes before the state's check,
// naming what the whole world would weigh.
func TestRestoreRefusesAHeavyStateBeforeBuilding(t *testing.T) {
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	const maxBytes = 1 << 20
	w, err := world.New(world.Config{ClockMode: clock.Manual, ClockStart: t0, Scenarios: reg, MaxBytes: maxBytes,
		Fixtures: func() (state.Snapshot, error) { return project(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	before := w.Export()
	snap := project()
	for i := range 20_000 {
		snap.Deployments = append(snap.Deployments, state.Deployment{ID: fmt.Sprintf("dpl_%08d", i), ProjectID: "prj_a", Target: state.TargetPreview, Status: state.StatusReady, CreatedAt: t0, Files: map[string]string{}})
	}
	snap.Deployments[7].ProjectID = "prj_missing" // the check would refuse it too
	scen, _ := reg.Get("default")
	rec := world.Recording{Scenario: scen, ClockMode: clock.Manual, Now: t0, Faults: fault.Saved{Next: 1},
		Lifecycles: map[string]time.Time{"dpl:dpl_00000003": t0, "dpl:dpl_gone": t0}}
	if err := w.CheckRecording(rec); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	err = w.Restore(snap, rec, world.ReplayInfo{})
	runtime.ReadMemStats(&m1)
	e, coded := apperr.As(err)
	if !coded || e.Code != apperr.PayloadTooLarge || !strings.Contains(e.Message, "--max-world-bytes") || !strings.Contains(e.Message, "the bundle's world weighs about") {
		t.Fatalf("Restore: %v, want 413 payload_too_large naming --max-world-bytes", err)
	}
	// the store's maps for 20,000 deployments take several MB; the refusal, a pass
	// over the state's ids and the anchors' map
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 2<<20 {
		t.Errorf("refusing the bundle allocated %d bytes: its maps were built", grew)
	}
	if after := w.Export(); !reflect.DeepEqual(after, before) {
		t.Error("a refused bundle changed the world")
	}

	// the weight it names is the one the refusal after Prepare names (the same anchors
	// kept): a world that holds the state alone but not what the bundle brings with it
	var named int64
	if i := strings.Index(e.Message, "weighs about "); i < 0 {
		t.Fatalf("no weight in %q", e.Message)
	} else if _, err := fmt.Sscanf(e.Message[i:], "weighs about %d", &named); err != nil {
		t.Fatalf("%q: %v", e.Message, err)
	}
	w2, err := world.New(world.Config{ClockMode: clock.Manual, ClockStart: t0, Scenarios: reg, MaxBytes: named - 1,
		Fixtures: func() (state.Snapshot, error) { return project(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w2.Close)
	runtime.GC()
	runtime.ReadMemStats(&m0)
	err = w2.Restore(snap, rec, world.ReplayInfo{})
	runtime.ReadMemStats(&m1)
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew <= 2<<20 {
		t.Fatalf("a bundle refused after Prepare allocated %d bytes: refused before it, this compares nothing", grew)
	}
	want := strings.Replace(e.Message, fmt.Sprintf("over the %d ", maxBytes), fmt.Sprintf("over the %d ", named-1), 1)
	if e2, _ := apperr.As(err); e2 == nil || e2.Message != want {
		t.Errorf("refused after Prepare: %v\nwant the same weight: %s", err, want)
	}
}
