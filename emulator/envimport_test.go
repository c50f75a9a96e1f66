package emulator_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// An environment variable name the API refuses does not get in another way: a state
// imported by PUT /_emulator/state, a bundle or a --state file holding one in a
// project's or a deployment's env is refused, in the words the API refuses it with
// (the field and the name), and a refused import changes nothing. Each took "A=B"
// before, which no build's environment can hold.
func TestImportedEnvNamesAreRefusedAsByTheAPI(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	good := string(src.get("/_emulator/state", "").Body)
	bundle := members(t, src.get("/_emulator/bundle", "").Body)

	paths := []struct {
		name string
		// load imports state (an export with one name changed) and returns the error's
		// message, "" when it was taken
		load func(t *testing.T, state string) string
	}{
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
	for _, name := range []string{"A=B", "1X", "A-B", "É", ""} {
		// the API's answer to the same name in a create's env
		r := src.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "env": map[string]string{name: "v"}})
		if r.Status != 400 || r.Code() != "invalid_request" {
			t.Fatalf("API, env %q: %d %s", name, r.Status, r.Body)
		}
		apiWords := r.Err(t).Message
		key, _ := json.Marshal(name)
		for _, where := range []struct{ what, from, to string }{
			{`deployment "dpl_first"`, `"FEATURE_X":"on"`, string(key) + `:"on"`},
			{`project "prj_shop"`, `"NODE_ENV":"production"`, string(key) + `:"production"`},
		} {
			state := replaceOnce(t, good, where.from, where.to)
			want := where.what + ": " + apiWords
			for _, p := range paths {
				t.Run(p.name+"/"+where.what+"/"+name, func(t *testing.T) {
					t.Parallel()
					if got := p.load(t, state); !strings.Contains(got, want) {
						t.Errorf("got %q, want it to say %q", got, want)
					}
				})
			}
		}
	}
	// the export itself, every name valid, is taken by each path
	for _, p := range paths {
		if got := p.load(t, good); got != "" {
			t.Errorf("%s: the untouched state: %s", p.name, got)
		}
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
