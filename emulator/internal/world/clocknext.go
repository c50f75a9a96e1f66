package world

import "github.com/hostemu/hostemu/emulator/internal/clock"

// ClockStep is the answer to a jump to the next transition: the clock, and whether a
// transition was pending (with none, the clock stays where it is).
type ClockStep struct {
	ClockView
	Fired bool `json:"fired"`
}

// AdvanceToNext moves a manual clock to the next scheduled transition and fires every
// transition due at that instant (POST /_emulator/clock/next).
func (w *World) AdvanceToNext() (ClockStep, error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if !w.clock.Mode().Stands() {
		return ClockStep{}, clockError(clock.ErrNotManual)
	}
	fired, err := w.sched.Step(clock.Limit)
	if err != nil {
		return ClockStep{}, clockError(err)
	}
	if fired {
		w.emitClock()
	}
	return ClockStep{ClockView: w.Clock(), Fired: fired}, nil
}
