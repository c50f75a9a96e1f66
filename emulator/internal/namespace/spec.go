package namespace

import "encoding/json"

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
	// server's scenarios as they are at creation.
	Scenarios []string `json:"scenarios"`
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
