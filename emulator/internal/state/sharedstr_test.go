package state

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// A state repeats its build logs' lines and its files' names and digests: the reader
// keeps each such string once, as a world built from fixtures does; other strings
// (ids, URLs, the files list) are not looked up.
func TestReadSharesRepeatedStrings(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	dep := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"project_id":"prj_1","url":"http://x","target":"preview","status":"ready","env":{"MODE":"on"},"files":{"index.html":%q},"timings":{"queued_at":null,"building_at":null,"ready_at":null,"error_at":null},"error":null,"logs":[{"text":"Deployment queued","created_at":"2026-11-27T14:50:32.000Z"}],"created_at":"2026-11-27T14:50:32.000Z"}`, id, digest)
	}
	doc := `{"projects":[{"id":"prj_1","name":"a","created_at":"2026-11-27T14:50:32.000Z","env":{},"production_deployment_id":null}],` +
		`"deployments":[` + dep("dpl_a") + `,` + dep("dpl_b") + `],"files":[` + fmt.Sprintf("%q", digest) + `]}`
	snap, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := &snap.Deployments[0], &snap.Deployments[1]
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two copies, want one string", what, x, y)
		}
	}
	same("a file's digest", a.Files["index.html"], b.Files["index.html"])
	if snap.Files[0] != digest {
		t.Errorf("the files list: %q", snap.Files)
	}
	same("a log line", a.Logs[0].Text, b.Logs[0].Text)
	same("an env value", a.Env["MODE"], b.Env["MODE"])
	for k := range a.Files {
		for l := range b.Files {
			same("a file's name", k, l)
		}
	}
	if a.ID == b.ID || a.URL != b.URL {
		t.Fatalf("read wrong: %+v %+v", a, b)
	}
}

// A table is a cache of bounded size: however many different strings a read asks for,
// the names' table never holds more than minSharedSlots and the values' more than
// maxSharedSlots, and a string it dropped is read again as itself.
func TestSharedStringsTableIsBounded(t *testing.T) {
	tab := newSharedStrings()
	a := arena{strs: &tab}
	for i := range 40 * maxSharedSlots {
		s := fmt.Sprintf("line %d", i)
		if got := a.name([]byte(s)); got != s {
			t.Fatalf("name(%q) = %q", s, got)
		}
		if got := a.value([]byte(s)); got != s {
			t.Fatalf("value(%q) = %q", s, got)
		}
	}
	if len(tab.names.slots) != minSharedSlots || len(tab.values.slots) != maxSharedSlots {
		t.Fatalf("%d and %d slots after %d strings, want the bounds %d and %d", len(tab.names.slots), len(tab.values.slots), 40*maxSharedSlots, minSharedSlots, maxSharedSlots)
	}
	small := newSharedStrings()
	b := arena{strs: &small}
	for range 100 {
		b.value([]byte("the same digest"))
	}
	if len(small.values.slots) != minSharedSlots {
		t.Fatalf("a read of one repeated string grew the table to %d slots", len(small.values.slots))
	}
}
