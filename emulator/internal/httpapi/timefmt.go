package httpapi

import (
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// journalView is a journal entry as the control API writes it: its time as a
// state.Timestamp, like every time hostemu writes.
type journalView struct {
	journal.Entry
	Time state.Timestamp `json:"time"`
}

func viewJournal(es []journal.Entry) []journalView {
	out := make([]journalView, len(es))
	for i, e := range es {
		out[i] = journalView{Entry: e, Time: state.Timestamp(e.Time)}
	}
	return out
}
