package scenario

// defaultScenario is the embedded default.yaml, parsed once, with no base (so it must
// set every key): the base of every parse. It is shared: never modify it. An error is a
// *BuiltinError naming default.yaml.
func defaultScenario() (*Scenario, error) { return embeddedBuiltins().base() }

// Default returns the built-in default scenario (the default row of docs/scenarios.md), the base
// every other scenario's missing sections come from. Each call returns a fresh copy. An
// error is a broken default.yaml (a *BuiltinError, a bug in hostemu that go test catches).
func Default() (*Scenario, error) {
	s, err := defaultScenario()
	if err != nil {
		return nil, err
	}
	return s.clone(), nil
}
