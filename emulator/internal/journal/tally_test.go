package journal_test

import (
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// Issue 32 item 5: a query evaluates its filter once per entry (it did twice), and a
// tally, an await's count, looks at each entry once however often it is asked.
func TestFiltersEvaluateEachEntryOnce(t *testing.T) {
	t.Parallel()
	j := journal.New(1000)
	for range 1000 {
		j.Add(journal.Entry{Method: "GET", Path: "/v1/" + strings.Repeat("a", 999) + "c"})
	}
	f := journal.Filter{Path: "*" + strings.Repeat("a", 1000) + "*b"}
	before := j.Evaluations()
	if n := len(j.List(f)); n != 0 {
		t.Fatalf("%d entries selected", n)
	}
	if got := j.Evaluations() - before; got != 1000 {
		t.Errorf("a query over 1,000 entries evaluated its filter %d times, want 1,000", got)
	}

	tally := j.Tally(journal.Filter{Method: "POST"}, 5)
	before = j.Evaluations()
	tally.Count() // the entries already there, once
	for range 100 {
		j.Add(journal.Entry{Method: "POST", Path: "/v1/x"})
		tally.Count()
		tally.Count() // a wake with nothing new costs nothing
	}
	if got := j.Evaluations() - before; got != 1100 {
		t.Errorf("a tally over 1,000 entries and 100 more evaluated %d entries, want 1,100", got)
	}
	if n := tally.Count(); n != 5 {
		t.Errorf("tally = %d, want 5 (at most want)", n)
	}
}

// A tally counts what Count counts: what the journal holds, after a clear, the ring
// dropping entries, a reset or a load.
func TestTallyFollowsTheJournal(t *testing.T) {
	t.Parallel()
	j := journal.New(3)
	f := journal.Filter{Method: "POST"}
	tally := j.Tally(f, 10)
	check := func(step string) {
		t.Helper()
		if got, want := tally.Count(), j.Count(f); got != want {
			t.Errorf("%s: tally %d, Count %d", step, got, want)
		}
	}
	check("empty")
	j.Add(journal.Entry{Method: "POST"})
	j.Add(journal.Entry{Method: "GET"})
	j.Add(journal.Entry{Method: "POST"})
	check("two of three")
	j.Add(journal.Entry{Method: "GET"}) // drops the first POST
	check("ring wrapped")
	j.Clear()
	check("cleared")
	j.Add(journal.Entry{Method: "POST"})
	check("after a clear")
	j.Reset()
	check("reset")
	j.Add(journal.Entry{Method: "POST"})
	j.Add(journal.Entry{Method: "POST"})
	check("renumbered after a reset")
	if err := j.Load([]journal.Entry{{Seq: 7, Method: "POST"}, {Seq: 9, Method: "GET"}}); err != nil {
		t.Fatal(err)
	}
	check("loaded")
	since := journal.Filter{Method: "POST", Since: 9}
	late := j.Tally(since, 1)
	j.Add(journal.Entry{Method: "POST"})
	if got := late.Count(); got != 1 {
		t.Errorf("tally since 9 after one more POST: %d", got)
	}
}
