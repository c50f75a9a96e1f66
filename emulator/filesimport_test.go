package emulator_test

import (
	"strings"
	"testing"
)

// A deployment's files the API refuses do not get in another way: a state imported by
// PUT /_emulator/state, a bundle (into the default world or a new namespace) or a
// --state file whose deployment has an empty file path or a hash that is not 64
// lowercase hex characters is refused, in the words the API refuses the same files
// with, and a refused import changes nothing. Each took them before.
func TestImportedFilesAreRefusedAsByTheAPI(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	good := string(src.get("/_emulator/state", "").Body)
	bundle := members(t, src.get("/_emulator/bundle", "").Body)
	const digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // dpl_first's index.html

	paths := importPaths(bundle)
	for _, c := range []struct {
		name, path, hash string
	}{
		{"empty path", "", digest},
		{"63-character hash", "index.html", digest[:63]},
		{"upper-case hash", "index.html", strings.ToUpper(digest)},
		{"hash not hex", "index.html", "nothex"},
	} {
		// the API's answer to the same files in a create
		r := src.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{c.path: c.hash}})
		if r.Status != 400 || r.Code() != "invalid_request" {
			t.Fatalf("API, %s: %d %s", c.name, r.Status, r.Body)
		}
		want := `deployment "dpl_first": ` + r.Err(t).Message
		state := replaceOnce(t, good, `"index.html":"`+digest+`"`, `"`+c.path+`":"`+c.hash+`"`)
		for _, p := range paths {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				if got := p.load(t, state); !strings.Contains(got, want) {
					t.Errorf("got %q, want it to say %q", got, want)
				}
			})
		}
	}
	// the export itself, every file valid, is taken by each path
	for _, p := range paths {
		if got := p.load(t, good); got != "" {
			t.Errorf("%s: the untouched state: %s", p.name, got)
		}
	}
}
