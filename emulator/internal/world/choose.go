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
// through: New (the default world's --scenario, and a namespace's), UseScenario (PUT
// /_emulator/scenarios/active) and a namespace's creation, which asks it before it
// builds anything (TestBrokenScenarioRefusedAlikeEverywhere). Two ways choose by no
// name and do not: Reset returns to the start-up scenario in the version in force, and
// a bundle's replay (httpapi.Restore) runs the bundle's own scenario.
func ChooseScenario(reg *scenario.Registry, name string) (*scenario.Scenario, error) {
	if msg := reg.BrokenMessage(name); msg != "" {
		return nil, apperr.New(apperr.InvalidRequest, msg)
	}
	sc, ok := reg.Get(name)
	if !ok {
		return nil, apperr.New(apperr.ScenarioNotFound, reg.NotFound(name))
	}
	return sc, nil
}
