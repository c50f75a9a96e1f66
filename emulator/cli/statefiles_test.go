package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --state file holding a deployment whose files the API refuses (none at all: null
// or no "files" key, included) does not start: exit 2, naming the file and the
// deployment in the API's words; the same file with valid files, or with no files
// ({}), starts.
func TestStateFileWithFilesTheAPIRefusesDoesNotStart(t *testing.T) {
	t.Parallel()
	const digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	// state is a state whose deployment's "files" member is files ("" for none)
	state := func(files string) string {
		if files != "" {
			files += ","
		}
		return `{"projects":[{"id":"prj_a","name":"a","created_at":"2026-01-02T03:04:05.000Z"}],` +
			`"deployments":[{"id":"dpl_a","project_id":"prj_a","url":"https://a-dpl-a.hostemu.localhost","target":"preview","status":"queued",` +
			files + `"timings":{"queued_at":"2026-01-02T03:04:05.000Z"},"created_at":"2026-01-02T03:04:05.000Z"}]}`
	}
	required := `deployment "dpl_a": field "files" is required: an object of file path to SHA-256 hash`
	for _, c := range []struct{ name, files, want string }{
		{"empty path", `"files":{"":"` + digest + `"}`, `deployment "dpl_a": field "files" has an empty file path`},
		{"63-character hash", `"files":{"index.html":"` + digest[:63] + `"}`, `deployment "dpl_a": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`},
		{"upper-case hash", `"files":{"index.html":"` + strings.ToUpper(digest) + `"}`, `deployment "dpl_a": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`},
		{"hash not hex", `"files":{"index.html":"nothex"}`, `deployment "dpl_a": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`},
		{"files null", `"files":null`, required},
		{"files missing", "", required},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(state(c.files)), 0o600); err != nil {
				t.Fatal(err)
			}
			// a start that took the file would serve until the bound: exit 0, not a hang
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			out, errOut := newLockedBuffer(), newLockedBuffer()
			vars := quietDefaults(nil)
			code := Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--state", path}, env(vars), environ(vars), out, errOut)
			if stderr := errOut.String(); code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, path) {
				t.Errorf("exit %d, stderr %q: want 2, %s named and %q", code, stderr, path, c.want)
			}
		})
	}
	for name, files := range map[string]string{"valid": `"files":{"index.html":"` + digest + `"}`, "no files ({})": `"files":{}`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(state(files)), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startServe(t, nil, "--addr", "127.0.0.1:0", "--state", path)
			if code := s.stop(t); code != 0 {
				t.Errorf("exit %d; stderr:\n%s", code, s.stderr.String())
			}
		})
	}
}
