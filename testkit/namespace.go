package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// createNamespace asks the running emulator for a namespace shaped by cfg, and makes
// r drive it.
func (r *remote) createNamespace(cfg *config) error {
	body := map[string]any{"clock": string(ClockManual)}
	if cfg.set["WithClock"] {
		body["clock"] = string(cfg.clockMode)
	}
	start := cfg.clockStart
	if start.IsZero() && ClockMode(body["clock"].(string)).Stands() {
		start = defaultClockStart
	}
	if !start.IsZero() {
		body["clock_start"] = start.UTC().Format(time.RFC3339)
	}
	if cfg.set["WithSeed"] {
		body["seed"] = cfg.seed
	}
	if cfg.set["WithScenario"] {
		body["scenario"] = cfg.scenario
	}
	if len(cfg.scenarioYAML) > 0 {
		body["scenarios"] = cfg.scenarioYAML
	}
	if cfg.set["WithFixtures"] {
		doc, err := fixtureJSON(cfg.fixtures)
		if err != nil {
			return err
		}
		body["fixtures"] = doc
	}
	var out struct {
		Namespace string `json:"namespace"`
		Tokens    Tokens `json:"tokens"`
		CipherKey string `json:"cipher_key"`
	}
	if err := r.do(context.Background(), http.MethodPost, "/_emulator/namespaces", body, &out); err != nil {
		return err
	}
	r.namespace, r.tokens, r.cipherKey = out.Namespace, out.Tokens, out.CipherKey
	return nil
}

func (r *remote) deleteNamespace() error {
	return r.do(context.Background(), http.MethodDelete, "/_emulator/namespaces/"+r.namespace, nil, nil)
}

// controlPath is the path of a control route for r's world: under its namespace, if
// it has one.
func (r *remote) controlPath(path string) string {
	if r.namespace == "" || !strings.HasPrefix(path, "/_emulator/") || strings.HasPrefix(path, "/_emulator/namespaces") {
		return path
	}
	return "/_emulator/namespaces/" + r.namespace + path[len("/_emulator"):]
}

// fixtureJSON reads a fixture file as the JSON value POST /_emulator/namespaces takes.
func fixtureJSON(path string) (any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("WithFixtures with Connect takes one file: %w", err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("fixtures %s: %w", path, err)
	}
	if _, err := json.Marshal(doc); err != nil {
		return nil, fmt.Errorf("fixtures %s: %w", path, err)
	}
	return doc, nil
}
