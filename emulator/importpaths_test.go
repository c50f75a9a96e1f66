package emulator_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// importPath is one way a whole state gets into hostemu: load imports state (an
// export with something changed) and returns the error's message, "" when it was
// taken; a refusal is checked to have changed nothing.
type importPath struct {
	name string
	load func(t *testing.T, state string) string
}

// importPaths are the ways a state is imported: PUT /_emulator/state, a bundle into
// the default world or into a new namespace, and a --state file at the start. bundle
// is an export's bundle members (members), whose state.json each bundle path replaces.
func importPaths(bundle map[string][]byte) []importPath {
	return []importPath{
		{"PUT /_emulator/state", func(t *testing.T, state string) string {
			e := newEnv(t)
			before := e.get("/_emulator/state", "").Body
			r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: state})
			return refused(t, e, r, before)
		}},
		{"PUT /_emulator/bundle", func(t *testing.T, state string) string {
			e := newEnv(t)
			before := e.get("/_emulator/state", "").Body
			r := e.putBundle("/_emulator/bundle", rebuild(t, bundle, map[string]string{"state.json": state}))
			return refused(t, e, r, before)
		}},
		{"POST /_emulator/namespaces with a bundle", func(t *testing.T, state string) string {
			e := newEnv(t)
			before := e.get("/_emulator/namespaces", "").Body
			r := e.do(req{Method: "POST", Path: "/_emulator/namespaces", Body: rebuild(t, bundle, map[string]string{"state.json": state}),
				Headers: map[string]string{"Content-Type": "application/gzip"}})
			if r.Status == 201 {
				return ""
			}
			if r.Status != 400 || r.Code() != "invalid_request" {
				t.Fatalf("%d %s, want 400 invalid_request", r.Status, r.Body)
			}
			if after := e.get("/_emulator/namespaces", "").Body; !bytes.Equal(after, before) {
				t.Errorf("a refused bundle made a namespace: %s", after)
			}
			return r.Err(t).Message
		}},
		{"--state", func(t *testing.T, state string) string {
			path := filepath.Join(t.TempDir(), "state.json")
			writeFile(t, path, state)
			emu, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, StateFile: path})
			if err == nil {
				emu.Close()
				return ""
			}
			return err.Error()
		}},
	}
}

// refused is the message of r, which must be a 400 invalid_request that left e's state
// as it was (before); "" when r took the state.
func refused(t *testing.T, e *env, r resp, before []byte) string {
	t.Helper()
	if r.Status == 200 {
		return ""
	}
	if r.Status != 400 || r.Code() != "invalid_request" {
		t.Fatalf("%d %s, want 400 invalid_request", r.Status, r.Body)
	}
	if !bytes.Equal(e.get("/_emulator/state", "").Body, before) {
		t.Error("a refused import changed the state")
	}
	return r.Err(t).Message
}
