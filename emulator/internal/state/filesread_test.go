package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A deployment's files are refused by Check in the API's words (FilesProblem), whether
// the state reader read them and left its verdict (its own check, digests shared with
// the project's last deployment included) or a snapshot was decoded or built
// otherwise, or changed after the read: each path names the same deployments with the
// same words.
func TestCheckRefusesFilesAsTheAPI(t *testing.T) {
	t.Parallel()
	const h1 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	const h2 = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	files := []struct {
		id, files, key string // key: "files", or "Files" for the strict decoder to read it
	}{
		{"dpl_01", `{"index.html":"` + h1 + `","app.js":"` + h2 + `"}`, "files"},
		{"dpl_02", `{"index.html":"` + h1 + `","app.js":"` + h2 + `"}`, "files"},      // shares dpl_01's strings
		{"dpl_03", `{"index.html":"` + h1 + `","app.js":"` + h2[:63] + `"}`, "files"}, // 63 characters
		{"dpl_04", `{"index.html":"` + h1 + `","app.js":"` + h2[:63] + `"}`, "files"}, // the same again, after a wrong one
		{"dpl_05", `{"index.html":"` + h1 + `","app.js":"` + h2 + `"}`, "files"},      // valid after them
		{"dpl_06", `{"index.html":"` + strings.ToUpper(h1) + `"}`, "files"},           // upper case
		{"dpl_07", `{"":"` + h1 + `","a":"nothex"}`, "files"},                         // the empty path comes first
		{"dpl_08", `{"index.html":"nothex"}`, "Files"},                                // left to the strict decoder
		{"dpl_09", `{"index.html":"` + h1 + `"}`, "Files"},                            // the same, valid
		{"dpl_10", `{}`, "files"},
		{"dpl_11", `null`, "files"}, // no files: refused as the API refuses a create without them
		{"dpl_12", `{"index.html":"` + h1 + `","app.js":"` + h2 + `","b":"` + h2 + `"}`, "files"},
	}
	var deps []string
	for _, f := range files {
		deps = append(deps, fmt.Sprintf(`{"id":%q,"project_id":"prj_1","url":"https://x","target":"preview","status":"queued",%q:%s,"timings":{"queued_at":"2026-01-02T03:04:05.000Z"},"created_at":"2026-01-02T03:04:05.000Z"}`, f.id, f.key, f.files))
	}
	doc := `{"projects":[{"id":"prj_1","name":"one","created_at":"2026-01-02T03:04:05.000Z"}],"deployments":[` + strings.Join(deps, ",") + `]}`
	want := []string{
		`deployment "dpl_03": field "files": the hash of "app.js" must be 64 lowercase hex characters (SHA-256)`,
		`deployment "dpl_04": field "files": the hash of "app.js" must be 64 lowercase hex characters (SHA-256)`,
		`deployment "dpl_06": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`,
		`deployment "dpl_07": field "files" has an empty file path`,
		`deployment "dpl_08": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`,
		`deployment "dpl_11": field "files" is required: an object of file path to SHA-256 hash`,
	}
	check := func(t *testing.T, snap *Snapshot) {
		t.Helper()
		err := snap.Check()
		var got []string
		if err != nil {
			got = strings.Split(err.Error(), "\n")
		}
		if !slices.Equal(got, want) {
			t.Errorf("Check:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// Load refuses it for the same, and keeps nothing of the verdict
		s := New()
		if err := s.Load(*snap); err == nil || err.Error() != strings.Join(want, "\n") {
			t.Errorf("Load: %v", err)
		}
	}

	t.Run("read", func(t *testing.T) {
		t.Parallel()
		snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// the reader checked all but the two the strict decoder read, and the null
		checkedByReader := 0
		for i := range snap.Deployments {
			if snap.filesRead.at(i) != nil {
				checkedByReader++
			}
		}
		if checkedByReader != len(files)-3 {
			t.Errorf("the reader checked %d deployments' files, want %d", checkedByReader, len(files)-3)
		}
		check(t, &snap)
	})
	t.Run("decoded by encoding/json", func(t *testing.T) {
		t.Parallel()
		check(t, decodedByJSON(t, doc))
	})
	t.Run("read, then changed", func(t *testing.T) {
		t.Parallel()
		snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// a valid deployment's files replaced by wrong ones, and the deployments
		// reversed: what the reader found of the ones at each place no longer holds
		snap.Deployments[0].Files = map[string]string{"index.html": "nothex"}
		slices.Reverse(snap.Deployments)
		wantBefore := want
		want := append([]string{`deployment "dpl_01": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`}, wantBefore...)
		slices.Reverse(want)
		err = snap.Check()
		if err == nil || err.Error() != strings.Join(want, "\n") {
			t.Errorf("Check: %v\nwant\n%s", err, strings.Join(want, "\n"))
		}
	})
}

// The verdict of a state of more deployments than one chunk of it holds names the
// deployments at their places past the first chunk.
func TestFilesVerdictAcrossChunks(t *testing.T) {
	t.Parallel()
	const h = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	n, wrong := 2*verdictChunk+10, map[int]bool{verdictChunk - 1: true, verdictChunk: true, 2*verdictChunk + 3: true}
	var deps []string
	var want []string
	for i := range n {
		hash := h
		if wrong[i] {
			hash = "nothex"
			want = append(want, fmt.Sprintf(`deployment "dpl_%d": field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`, i))
		}
		deps = append(deps, fmt.Sprintf(`{"id":"dpl_%d","project_id":"prj_1","url":"https://x","target":"preview","status":"queued","files":{"index.html":%q},"timings":{"queued_at":"2026-01-02T03:04:05.000Z"},"created_at":"2026-01-02T03:04:05.000Z"}`, i, hash))
	}
	doc := `{"projects":[{"id":"prj_1","name":"one","created_at":"2026-01-02T03:04:05.000Z"}],"deployments":[` + strings.Join(deps, ",") + `]}`
	snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if snap.filesRead.n != n || snap.filesRead.at(n-1) == nil || snap.filesRead.at(n) != nil {
		t.Fatalf("the verdict holds %d deployments, want %d, each read", snap.filesRead.n, n)
	}
	if err := snap.Check(); err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Check: %v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// TestFilesCheckedHoldsOnlyTheMapsItSaw: a snapshot whose builder vouched for its
// files (the fixtures) is not walked again, but a deployment whose files are replaced
// afterwards, or one appended, is checked as any other.
func TestFilesCheckedHoldsOnlyTheMapsItSaw(t *testing.T) {
	good := map[string]string{"/index.html": strings.Repeat("a", 64)}
	bad := map[string]string{"/index.html": strings.Repeat("A", 64)}
	snap := Snapshot{
		Projects: []Project{{ID: "prj_a", Name: "a", CreatedAt: time.Unix(1e9, 0).UTC()}},
	}
	at := time.Unix(1e9, 0).UTC()
	for _, id := range []string{"dpl_1", "dpl_2"} {
		snap.Deployments = append(snap.Deployments, Deployment{ID: id, ProjectID: "prj_a", Status: StatusQueued,
			Target: TargetPreview, CreatedAt: at, Timings: Timings{QueuedAt: &at}, Files: good})
	}
	snap.FilesChecked()
	if err := snap.Check(); err != nil {
		t.Fatalf("vouched, valid files: %v", err)
	}
	snap.Deployments[1].Files = bad
	if err := snap.Check(); err == nil || !strings.Contains(err.Error(), `deployment "dpl_2": field "files": the hash of "/index.html" must be 64 lowercase hex characters`) {
		t.Fatalf("files replaced after the vouch: %v", err)
	}
	snap.Deployments[1].Files = good
	snap.Deployments = append(snap.Deployments, snap.Deployments[0])
	snap.Deployments[2].ID, snap.Deployments[2].Files = "dpl_3", map[string]string{"": strings.Repeat("b", 64)}
	if err := snap.Check(); err == nil || !strings.Contains(err.Error(), `deployment "dpl_3": field "files" has an empty file path`) {
		t.Fatalf("a deployment added after the vouch: %v", err)
	}
}

// A deployment with no files ("files": null, or no "files" key; a nil map built in
// Go) is refused by Check as the API refuses a create without them (FilesProblem),
// whoever made the snapshot; a deployment of no files ({}), which the API creates, is
// not. A null or {} between two deployments of a project with the same wrong digest
// does not make the reader take the second's on trust (the digests it shares are
// those of the deployment before the null).
func TestCheckRefusesDeploymentsWithoutFiles(t *testing.T) {
	t.Parallel()
	const h = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	required := `field "files" is required: an object of file path to SHA-256 hash`
	if got := FilesProblem(nil); got != required {
		t.Fatalf("FilesProblem(nil) = %q, want %q", got, required)
	}
	if got := FilesProblem(map[string]string{}); got != "" {
		t.Fatalf("FilesProblem({}) = %q, want none", got)
	}
	files := []struct{ id, member string }{
		{"dpl_01", `"files":{"index.html":"` + h + `"}`},
		{"dpl_02", `"files":null`},
		{"dpl_03", ``},
		{"dpl_04", `"files":{}`},
		{"dpl_05", `"Files":null`}, // left to the strict decoder
		{"dpl_06", `"files":{"index.html":"nothex"}`},
		{"dpl_07", `"files":null`},
		{"dpl_08", `"files":{"index.html":"nothex"}`}, // the same wrong digest after a null
		{"dpl_09", `"files":{}`},
		{"dpl_10", `"files":{"index.html":"nothex"}`}, // and after a {}
	}
	var deps []string
	for _, f := range files {
		member := f.member
		if member != "" {
			member += ","
		}
		deps = append(deps, fmt.Sprintf(`{"id":%q,"project_id":"prj_1","url":"https://x","target":"preview","status":"queued",%s"timings":{"queued_at":"2026-01-02T03:04:05.000Z"},"created_at":"2026-01-02T03:04:05.000Z"}`, f.id, member))
	}
	doc := `{"projects":[{"id":"prj_1","name":"one","created_at":"2026-01-02T03:04:05.000Z"}],"deployments":[` + strings.Join(deps, ",") + `]}`
	wrong := `field "files": the hash of "index.html" must be 64 lowercase hex characters (SHA-256)`
	want := []string{
		`deployment "dpl_02": ` + required,
		`deployment "dpl_03": ` + required,
		`deployment "dpl_05": ` + required,
		`deployment "dpl_06": ` + wrong,
		`deployment "dpl_07": ` + required,
		`deployment "dpl_08": ` + wrong,
		`deployment "dpl_10": ` + wrong,
	}
	check := func(t *testing.T, snap *Snapshot) {
		t.Helper()
		if err := snap.Check(); err == nil || err.Error() != strings.Join(want, "\n") {
			t.Errorf("Check: %v\nwant\n%s", err, strings.Join(want, "\n"))
		}
		if err := New().Load(*snap); err == nil || err.Error() != strings.Join(want, "\n") {
			t.Errorf("Load: %v", err)
		}
	}
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, &snap)
	})
	t.Run("decoded by encoding/json", func(t *testing.T) {
		t.Parallel()
		check(t, decodedByJSON(t, doc))
	})
	t.Run("built in Go", func(t *testing.T) {
		t.Parallel()
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		snap := Snapshot{Projects: []Project{{ID: "prj_1", Name: "one", CreatedAt: at}}}
		for _, f := range []map[string]string{{"index.html": h}, nil, {}} {
			snap.Deployments = append(snap.Deployments, Deployment{ID: fmt.Sprintf("dpl_%d", len(snap.Deployments)+1),
				ProjectID: "prj_1", URL: "https://x", Target: TargetPreview, Status: StatusQueued,
				Timings: Timings{QueuedAt: &at}, CreatedAt: at, Files: f})
		}
		want := `deployment "dpl_2": ` + required
		if err := snap.Check(); err == nil || err.Error() != want {
			t.Errorf("Check: %v, want %s", err, want)
		}
		// vouched for by its builder (Snapshot.FilesChecked) or not: a nil map is refused
		snap.FilesChecked()
		if err := New().Load(snap); err == nil || err.Error() != want {
			t.Errorf("Load, vouched: %v, want %s", err, want)
		}
	})
}

// decodedByJSON is doc decoded by encoding/json, with no reader's verdict: a snapshot
// whose deployments' files Check must check itself.
func decodedByJSON(t *testing.T, doc string) *Snapshot {
	t.Helper()
	var snap Snapshot
	if err := json.Unmarshal([]byte(doc), &snap); err != nil {
		t.Fatal(err)
	}
	return &snap
}
