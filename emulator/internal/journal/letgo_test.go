package journal_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// TestDroppedEntriesAreLetGo: once entries drop out of a small journal, what they held
// is collected (the docs/security.md journal row's bound): nothing of a dropped entry
// is kept alive by the entries after it, whatever its size.
func TestDroppedEntriesAreLetGo(t *testing.T) {
	for _, c := range []struct {
		name     string
		path     int // bytes of path, 1 header
		maxAlive int // dropped entries whose strings may live on
	}{
		{"long strings", 600, 0},
		{"short strings", 400, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			const keep, n = 2, 300
			j := journal.New(keep)
			var held [n]weak.Pointer[byte]
			for i := range n {
				e := journal.Entry{Method: "GET", Path: fmt.Sprintf("/%0*d", c.path-1, i), Status: 200}
				e.SetRequestHeaders(http.Header{"X-Id": {fmt.Sprint(i)}})
				got := j.Record(e)
				held[i] = weak.Make(unsafe.StringData(got.Path))
			}
			runtime.GC()
			runtime.GC()
			var alive []int
			for i := range n - keep {
				if held[i].Value() != nil {
					alive = append(alive, i)
				}
			}
			if len(alive) > c.maxAlive {
				t.Fatalf("%d dropped entries' strings still alive (at most %d may): %v", len(alive), c.maxAlive, alive)
			}
			for _, e := range j.List(journal.Filter{}) { // the live ones intact
				if !strings.HasSuffix(e.Path, fmt.Sprint(e.Seq-1)) || e.Headers[0].Value != fmt.Sprint(e.Seq-1) {
					t.Fatalf("entry %d: path …%q, headers %v", e.Seq, e.Path[len(e.Path)-20:], e.Headers)
				}
			}
		})
	}
}

// TestDecodingIntoAnEntryLeavesTheJournalAlone: JSON decoded into a copy of a
// journaled entry (Headers' UnmarshalJSON) gives the copy headers of its own: its old
// ones are the journal's entry's, shared with every copy and never written again.
func TestDecodingIntoAnEntryLeavesTheJournalAlone(t *testing.T) {
	j := journal.New(10)
	e := journal.Entry{Method: "GET", Path: "/p", Status: 200}
	e.SetRequestHeaders(http.Header{"X-A": {"1"}, "X-B": {"2"}})
	e.SetResponse(200, http.Header{"Content-Type": {"application/json"}}, nil)
	got := j.Record(e)
	if err := json.Unmarshal([]byte(`{"headers":{"X-C":"3"},"response":{"headers":{"Location":"/x"}}}`), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Headers) != 1 || got.Headers[0] != (journal.Header{Name: "X-C", Value: "3"}) {
		t.Fatalf("decoded: %v", got.Headers)
	}
	kept := j.List(journal.Filter{})[0]
	if h := kept.Headers; len(h) != 2 || h[0] != (journal.Header{Name: "X-A", Value: "1"}) || h[1] != (journal.Header{Name: "X-B", Value: "2"}) {
		t.Fatalf("the journal's entry's headers changed: %v", h)
	}
	if h := kept.Response.Headers; len(h) != 1 || h[0] != (journal.Header{Name: "Content-Type", Value: "application/json"}) {
		t.Fatalf("the journal's entry's answer headers changed: %v", h)
	}
}
