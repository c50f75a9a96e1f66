package world

import (
	"context"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// ChangeLog keeps a world's changes durable: the --state change log.
type ChangeLog interface {
	// Record receives every change of the state, in order, under the state's lock: it
	// must return at once and must not call the world.
	Record(state.Change)
	// WaitDurable returns once every change up to seq (a Changes count) is durable,
	// or with why not.
	WaitDurable(ctx context.Context, seq uint64) error
}

type changeLogBox struct{ ChangeLog }

// SetChangeLog makes l record every change from now on; Durable waits on it.
func (w *World) SetChangeLog(l ChangeLog) {
	w.changeLog.Store(&changeLogBox{l})
	w.store.SetHook(l.Record)
}

// Durable returns once every change made so far is durable (at once without a change
// log): a write is acknowledged only after it, so a crash never loses one that was.
func (w *World) Durable(ctx context.Context) error {
	b := w.changeLog.Load()
	if b == nil {
		return nil
	}
	return b.WaitDurable(ctx, w.store.Changes())
}

// ExportSeq is the whole state with the Changes count it reflects, read at one
// instant; it runs no due transition, so it changes nothing.
func (w *World) ExportSeq() (state.Snapshot, uint64) {
	snap, seq := w.store.ExportSeq()
	snap.Uploads = w.uploads()
	return snap, seq
}
