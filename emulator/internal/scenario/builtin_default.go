package scenario

import (
	"fmt"
	"sync"

	"github.com/hostemu/hostemu/scenarios"
)

// defaultScenario is the built-in default, read once from scenarios/default.yaml with
// no base (so it must set every key). It is shared: never modify it.
var defaultScenario = sync.OnceValue(func() *Scenario {
	data, err := scenarios.FS.ReadFile("default.yaml")
	if err != nil {
		panic(fmt.Sprintf("scenario: the built-in default.yaml is missing: %v", err))
	}
	s, problems := parse("default.yaml", data, nil)
	if len(problems) > 0 {
		panic(fmt.Sprintf("scenario: the built-in default.yaml is invalid: %v", problems))
	}
	s.Source = SourceBuiltin
	return s
})

// Default returns the built-in default scenario (the default row of docs/scenarios.md), the base
// every other scenario's missing sections come from. Each call returns a fresh copy.
func Default() *Scenario { return defaultScenario().clone() }
