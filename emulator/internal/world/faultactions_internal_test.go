package world

import (
	"slices"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// Every action a firing can count is one coverage lists: each break kind of the fault
// package among them.
func TestFaultActionsAreCoverages(t *testing.T) {
	t.Parallel()
	body := &fault.Payload{Text: "x"}
	acts := []fault.Action{
		{}, {Pass: true, Step: 3}, {Error: "service_unavailable", Status: 503}, {Status: 500}, {RateLimit: true}, {Timeout: true}, {Drop: true},
		{Delay: 1, Shape: &fault.Shape{Headers: map[string]string{"A": "b"}, Body: body}},
	}
	for _, k := range fault.Breaks {
		acts = append(acts, fault.Action{Break: k, Step: 1})
	}
	seen := map[string]bool{}
	for _, act := range acts {
		var buf [maxFaultActions]string
		for _, a := range faultActions(act, &buf) {
			if !slices.Contains(coverage.FaultActions, a) {
				t.Errorf("action %+v counts %q, which coverage does not list", act, a)
			}
			seen[a] = true
		}
	}
	for _, a := range coverage.FaultActions {
		if !seen[a] {
			t.Errorf("coverage lists %q, which no firing counts", a)
		}
	}
}

// Counting a firing allocates nothing, whatever its break.
func TestFaultActionsAllocateNothing(t *testing.T) {
	for _, k := range fault.Breaks {
		act := fault.Action{Break: k, Step: 1}
		var buf [maxFaultActions]string
		if n := testing.AllocsPerRun(100, func() { faultActions(act, &buf) }); n != 0 {
			t.Errorf("break %s: %v allocations", k, n)
		}
	}
}
