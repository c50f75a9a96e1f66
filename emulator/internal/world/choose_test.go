package world_test

import (
	"errors"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// New's refusal of its scenario is a *world.ScenarioRefusal carrying ChooseScenario's
// code and words, and nothing else New fails with is: a caller answering an API
// request tells the two apart without reading messages, and the start-up wording (the
// message alone, no code) stays as it was.
func TestNewRefusalIsTheScenarios(t *testing.T) {
	t.Parallel()
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	fixturesErr := apperr.New(apperr.StorageFull, "the fixtures do not fit")
	tests := []struct {
		name     string
		scenario string
		fixtures func() (state.Snapshot, error)
		refusal  apperr.Code // "" when New must fail otherwise
		err      string
	}{
		{name: "unknown scenario", scenario: "nosuch", fixtures: func() (state.Snapshot, error) { return state.Snapshot{}, nil },
			refusal: apperr.ScenarioNotFound, err: reg.NotFound("nosuch")},
		{name: "fixtures' coded error", scenario: "default", fixtures: func() (state.Snapshot, error) { return state.Snapshot{}, fixturesErr },
			err: fixturesErr.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := world.New(world.Config{Scenarios: reg, Scenario: tt.scenario, ClockMode: clock.Manual, ClockStart: t0, Fixtures: tt.fixtures})
			if err == nil {
				w.Close()
				t.Fatal("New succeeded")
			}
			if err.Error() != tt.err {
				t.Errorf("New: %q, want %q", err, tt.err)
			}
			var refused *world.ScenarioRefusal
			switch isRefusal := errors.As(err, &refused); {
			case tt.refusal == "" && isRefusal:
				t.Errorf("New's %v is taken for the scenario's refusal", err)
			case tt.refusal != "" && !isRefusal:
				t.Errorf("New's %v (%T) is no *world.ScenarioRefusal", err, err)
			case tt.refusal != "" && refused.Err.Code != tt.refusal:
				t.Errorf("refusal code %s, want %s", refused.Err.Code, tt.refusal)
			}
			if tt.refusal != "" {
				if _, coded := apperr.As(err); coded {
					t.Errorf("the start-up refusal %v carries a code outside ScenarioRefusal", err)
				}
			} else if e, _ := apperr.As(err); e == nil || e.Code != fixturesErr.Code {
				t.Errorf("the fixtures' error lost its code: %v", err)
			}
		})
	}
}

// A caller that chose the scenario already (Config.Chosen) is not asked again: New
// starts on it even if the registry no longer has it.
func TestNewStartsOnChosen(t *testing.T) {
	t.Parallel()
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := reg.Get("default")
	if !ok {
		t.Fatal("no default scenario")
	}
	gone := *sc
	gone.Name = "gone" // in no registry
	w, err := world.New(world.Config{Scenarios: reg, Scenario: "gone", Chosen: &gone, ClockMode: clock.Manual, ClockStart: t0,
		Fixtures: func() (state.Snapshot, error) { return state.Snapshot{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Scenario(); got != &gone {
		t.Errorf("started on %q, want the chosen one", got.Name)
	}
}
