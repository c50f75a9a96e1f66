package namespace

import (
	"encoding/json"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// Spec is what POST /_emulator/namespaces takes; every field is optional, and the
// server's own start-up settings fill the ones left out.
type Spec struct {
	Scenario   *string `json:"scenario"`
	Seed       *int64  `json:"seed"`
	Clock      *string `json:"clock"`       // "real" or "manual"
	ClockStart *string `json:"clock_start"` // RFC 3339
	// Fixtures is a fixture document as JSON (JSON is YAML, so the fixture parser
	// reads it as it is); absent or null: the server's fixtures.
	Fixtures json.RawMessage `json:"fixtures"`
	// Scenarios are scenario documents (YAML) of this namespace only, beside the
	// server's scenarios as its reloads leave them (scenario.Registry.Derive).
	Scenarios []string `json:"scenarios"`

	// start is the scenario the world starts on when it was chosen already (StartOn).
	start *scenario.Scenario
}

// StartOn is s with its world starting on sc, a scenario chosen already rather than
// named: a failure bundle's, which the namespace replays at once (POST
// /_emulator/namespaces with a bundle). No name is asked of the registry, so neither
// the server's start-up scenario nor its file's state decides whether the namespace
// can be made. A reset of the namespace returns to the registry's scenario of sc's name
// (not sc itself, when sc is a bundle's own), or keeps the one in force when the
// registry has none of that name (world.World.Reset).
func (s Spec) StartOn(sc *scenario.Scenario) Spec {
	s.start = sc
	return s
}

// Bounds of Spec.Scenarios: documents, the bytes of one, the bytes of all (a scenario
// file is a few KiB; parsing holds several times a document's size).
const (
	MaxScenarios      = 32
	MaxScenarioBytes  = 256 << 10
	MaxScenariosBytes = 1 << 20
)

// Created is the answer to POST /_emulator/namespaces.
type Created struct {
	Namespace  string `json:"namespace"`
	Tokens     Tokens `json:"tokens"`
	CipherKey  string `json:"cipher_key"`
	ControlURL string `json:"control_url"`
}
