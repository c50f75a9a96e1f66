package world

import (
	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// ChooseScenario is the scenario named name in reg, for a world to start on or switch
// to, or why it cannot be: invalid_request with the file's problems when the file
// claiming name is broken (scenario.Registry.BrokenMessage, asked before the name's
// existence, so that a file that never parsed answers with its problems and a file
// meant to override a built-in never starts the built-in), scenario_not_found
// otherwise. It is the one check every way of choosing a world's scenario by name goes
// through: New (the default world's --scenario), UseScenario (PUT
// /_emulator/scenarios/active) and a namespace's creation, which asks it once, before
// it builds anything, and has New start on the answer (Config.Chosen;
// TestBrokenScenarioRefusedAlikeEverywhere). Three ways choose by no name and do not:
// Reset returns to the start-up scenario in the version in force, a bundle's replay
// (httpapi.Restore) runs the bundle's scenario, and so does a namespace made from a
// bundle from its start (namespace.Spec.StartOn).
//
// A built-in that does not parse (a *scenario.BuiltinError, a bug in hostemu that go
// test catches) is returned as it is, an internal error naming the file: never taken
// for an unknown scenario.
func ChooseScenario(reg *scenario.Registry, name string) (*scenario.Scenario, error) {
	if msg := reg.BrokenMessage(name); msg != "" {
		return nil, apperr.New(apperr.InvalidRequest, msg)
	}
	sc, ok, err := reg.Find(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.ScenarioNotFound, reg.NotFound(name))
	}
	return sc, nil
}

// ScenarioRefusal is New's refusal of the scenario its Config names (ChooseScenario's
// answer, in Err), told apart from every other failure of New: a caller that answers an
// API request (a namespace's creation) answers with Err's own code and words, and one
// that starts the server (--scenario) reports Error, the message alone, as a
// configuration error worded as PUT /_emulator/scenarios/active words it. It does not
// unwrap to Err, so apperr.As finds no code in it: only a caller that asks for a
// ScenarioRefusal turns it back into an API error.
type ScenarioRefusal struct {
	Err *apperr.Error
}

// Error is the refusal's message alone, as the start-up reports it.
func (r *ScenarioRefusal) Error() string { return r.Err.Message }
