package emulator_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// An environment variable name the API refuses does not get in another way: a state
// imported by PUT /_emulator/state, a bundle (into the default world or a new
// namespace) or a --state file holding one in a project's or a deployment's env is
// refused, in the words the API refuses it with (the field and the name), and a
// refused import changes nothing. Each took "A=B" before, which no build's
// environment can hold.
func TestImportedEnvNamesAreRefusedAsByTheAPI(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	good := string(src.get("/_emulator/state", "").Body)
	bundle := members(t, src.get("/_emulator/bundle", "").Body)

	paths := importPaths(bundle)
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
