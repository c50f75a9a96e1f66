package emulator_test

import (
	"strings"
	"testing"
)

// A deployment's files the API refuses do not get in another way: a state imported by
// PUT /_emulator/state, a bundle (into the default world or a new namespace) or a
// --state file whose deployment has an empty file path, a hash that is not 64
// lowercase hex characters, or no files at all ("files": null, or no "files" key) is
// refused, in the words the API refuses the same files with, and a refused import
// changes nothing; a deployment of no files ({}), which the API creates, is taken.
// Each took them before.
func TestImportedFilesAreRefusedAsByTheAPI(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	good := string(src.get("/_emulator/state", "").Body)
	bundle := members(t, src.get("/_emulator/bundle", "").Body)
	const digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // dpl_first's index.html

	paths := importPaths(bundle)
	const files = `"files":{"index.html":"` + digest + `"}` // dpl_first's, as exported
	for _, c := range []struct {
		name  string
		files string // dpl_first's "files" member, "" for none
	}{
		{"empty path", `"files":{"":"` + digest + `"}`},
		{"63-character hash", `"files":{"index.html":"` + digest[:63] + `"}`},
		{"upper-case hash", `"files":{"index.html":"` + strings.ToUpper(digest) + `"}`},
		{"hash not hex", `"files":{"index.html":"nothex"}`},
		{"files null", `"files":null`},
		{"files missing", ""},
	} {
		// the API's answer to the same files in a create
		body := `{"project_id":"prj_shop"}`
		if c.files != "" {
			body = `{"project_id":"prj_shop",` + c.files + `}`
		}
		r := src.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: body})
		if r.Status != 400 || r.Code() != "invalid_request" {
			t.Fatalf("API, %s: %d %s", c.name, r.Status, r.Body)
		}
		want := `deployment "dpl_first": ` + r.Err(t).Message
		state := replaceOnce(t, good, files, c.files)
		if c.files == "" {
			state = replaceOnce(t, good, ","+files, "")
		}
		for _, p := range paths {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				if got := p.load(t, state); !strings.Contains(got, want) {
					t.Errorf("got %q, want it to say %q", got, want)
				}
			})
		}
	}
	// the export itself, every file valid, is taken by each path, and so is a
	// deployment of no files, as the API creates one
	mustStatus(t, src.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	empty := replaceOnce(t, good, files, `"files":{}`)
	for _, p := range paths {
		if got := p.load(t, good); got != "" {
			t.Errorf("%s: the untouched state: %s", p.name, got)
		}
		if got := p.load(t, empty); got != "" {
			t.Errorf("%s: a deployment of no files ({}): %s", p.name, got)
		}
	}
}
