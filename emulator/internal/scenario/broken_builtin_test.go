package scenario_test

import (
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
	"github.com/hostemu/hostemu/scenarios"
)

// TestBrokenBuiltinIsNoRefusal: a built-in that does not parse (a bug in hostemu) is,
// wherever a world chooses it (its start, a switch), the *scenario.BuiltinError itself:
// not an apperr code, so the API answers an internal error in the envelope; not a
// *world.ScenarioRefusal, which would carry no error (a nil *apperr.Error, the caller's
// 400 or a panic) where New used to wrap it regardless.
func TestBrokenBuiltinIsNoRefusal(t *testing.T) {
	def, err := scenarios.FS.ReadFile("default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := scenario.NewRegistryOver(fstest.MapFS{
		"default.yaml": {Data: def},
		"broken.yaml":  {Data: []byte("name: broken\nfaults: 3\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	isBuiltinError := func(what string, err error) {
		t.Helper()
		var be *scenario.BuiltinError
		var refusal *world.ScenarioRefusal
		if _, coded := apperr.As(err); !errors.As(err, &be) || be.File != "broken.yaml" || coded || errors.As(err, &refusal) {
			t.Errorf("%s: %T %v; want the *scenario.BuiltinError of broken.yaml, uncoded", what, err, err)
		}
	}
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	empty := func() (state.Snapshot, error) { return state.Snapshot{}, nil }

	_, err = world.ChooseScenario(reg, "broken")
	isBuiltinError("ChooseScenario", err)

	w, err := world.New(world.Config{Scenarios: reg, Scenario: "broken", ClockMode: clock.Manual, ClockStart: start, Fixtures: empty})
	if w != nil {
		t.Error("New started a world on a broken built-in")
	}
	isBuiltinError("New", err)

	w, err = world.New(world.Config{Scenarios: reg, Scenario: "default", ClockMode: clock.Manual, ClockStart: start, Fixtures: empty})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	name := "broken"
	isBuiltinError("UseScenario", w.UseScenario(&name))
	if got := w.Scenario().Name; got != "default" {
		t.Errorf("after a failed switch the world runs %q", got)
	}
}
