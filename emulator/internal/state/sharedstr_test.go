package state

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// A project's deployments repeat their files' names and digests and their build logs'
// lines: the reader keeps such a string once where the project's last deployment had
// the same one in the same place, as a world built from fixtures shares them; other
// strings (ids, URLs) and other projects' are not shared.
func TestReadSharesRepeatedStrings(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	dep := func(id, project string) string {
		return fmt.Sprintf(`{"id":%q,"project_id":%q,"url":"http://x","target":"preview","status":"ready","env":{},"files":{"a.css":%q,"index.html":%q},"timings":{"queued_at":null,"building_at":null,"ready_at":null,"error_at":null},"error":null,"logs":[{"text":"Deployment queued","created_at":"2026-11-27T14:50:32.000Z"},{"text":"Building %s","created_at":"2026-11-27T14:50:32.000Z"}],"created_at":"2026-11-27T14:50:32.000Z"}`, id, project, id, digest, id)
	}
	project := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"name":%q,"created_at":"2026-11-27T14:50:32.000Z","env":{},"production_deployment_id":null}`, id, id)
	}
	doc := `{"projects":[` + project("prj_1") + `,` + project("prj_2") + `],` +
		`"deployments":[` + dep("dpl_a", "prj_1") + `,` + dep("dpl_c", "prj_2") + `,` + dep("dpl_b", "prj_1") + `]}`
	snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, c, b := &snap.Deployments[0], &snap.Deployments[1], &snap.Deployments[2]
	one := func(x, y string) bool { return x == y && unsafe.StringData(x) == unsafe.StringData(y) }
	same := func(what, x, y string) {
		t.Helper()
		if !one(x, y) {
			t.Errorf("%s: %q and %q are two copies, want one string", what, x, y)
		}
	}
	same("a file's digest", a.Files["index.html"], b.Files["index.html"])
	same("a log line", a.Logs[0].Text, b.Logs[0].Text)
	for k := range a.Files {
		if k == "index.html" {
			for l := range b.Files {
				if l == k {
					same("a file's name", k, l)
				}
			}
		}
	}
	if one(a.Files["index.html"], c.Files["index.html"]) {
		t.Error("another project's deployment shares its strings: want only the project's last deployment's")
	}
	if a.Files["a.css"] == b.Files["a.css"] || a.Logs[1].Text == b.Logs[1].Text || a.ID == b.ID {
		t.Fatalf("read wrong: %+v %+v", a, b)
	}
}

// What an arena keeps of the last deployments is bounded: maxRecent projects, each
// with at most maxRecentItems files and lines.
func TestRecentIsBounded(t *testing.T) {
	var ar arena
	for i := range maxRecent + 10 {
		if r := ar.recentOf(fmt.Sprint("prj_", i)); (r == nil) != (i >= maxRecent) {
			t.Fatalf("project %d: recent %v", i, r)
		}
	}
	// maxRecentItems files and lines are kept, one more is not
	for _, n := range []int{maxRecentItems, maxRecentItems + 1} {
		files := make([]string, 0, n)
		logs := make([]string, 0, n)
		for i := range n {
			files = append(files, fmt.Sprintf(`"f%d":"d"`, i))
			logs = append(logs, fmt.Sprintf(`{"text":"line %d","created_at":"2026-11-27T14:50:32.000Z"}`, i))
		}
		doc := fmt.Sprintf(`{"id":"dpl_1","project_id":"prj_1","files":{%s},"logs":[%s]}`, strings.Join(files, ","), strings.Join(logs, ","))
		var big arena
		var d Deployment
		if !decodeDeployment([]byte(doc), &d, &big) {
			t.Fatal("gave up")
		}
		r := big.recentOf("prj_1")
		wantFiles, wantLogs := 2*n, n
		if n > maxRecentItems {
			wantFiles, wantLogs = 0, 0
		}
		if len(r.files) != wantFiles || len(r.logs) != wantLogs {
			t.Fatalf("kept %d strings of %d files and %d of %d lines, want %d and %d", len(r.files), len(d.Files), len(r.logs), len(d.Logs), wantFiles, wantLogs)
		}
	}
}
