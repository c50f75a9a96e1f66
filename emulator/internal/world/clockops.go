package world

import (
	"errors"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// ClockView is the clock as the control API shows it.
type ClockView struct {
	Now  state.Timestamp `json:"now"`
	Mode string          `json:"mode"`
}

// Now is the emulated time.
func (w *World) Now() time.Time { return w.clock.Now() }

// Clock is the clock's time and mode.
func (w *World) Clock() ClockView {
	return ClockView{Now: state.Timestamp(w.clock.Now()), Mode: string(w.clock.Mode())}
}

// ClockMode is the clock's mode.
func (w *World) ClockMode() clock.Mode { return w.clock.Mode() }

// ClockChange is a PUT /_emulator/clock request: a mode to switch to, and a time to move
// a manual clock to. Both optional.
type ClockChange struct {
	Mode *string `json:"mode"`
	Now  *string `json:"now"`
}

// SetClock switches the clock's mode and moves a manual clock to a time, firing what
// falls due on the way. Both fields are checked before anything changes.
func (w *World) SetClock(ch ClockChange) (ClockView, error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	mode := w.clock.Mode()
	if ch.Mode != nil {
		m, err := clock.ParseMode(*ch.Mode)
		if err != nil {
			return ClockView{}, apperr.New(apperr.InvalidRequest, `field "mode" must be "real" or "manual"`)
		}
		mode = m
	}
	var to time.Time
	if ch.Now != nil {
		t, err := time.Parse(time.RFC3339Nano, *ch.Now)
		if err != nil {
			return ClockView{}, apperr.New(apperr.InvalidRequest, `field "now" must be an RFC 3339 time`)
		}
		to = t.UTC()
		switch {
		case mode != clock.Manual:
			return ClockView{}, clockError(clock.ErrNotManual)
		case to.Before(w.clock.Now()):
			return ClockView{}, clockError(clock.ErrBackwards)
		case to.After(clock.Limit):
			return ClockView{}, clockError(clock.ErrTooFar)
		}
	}
	if ch.Mode != nil {
		w.clock.SetMode(mode)
		w.sched.Wake()
	}
	if ch.Now != nil {
		if _, err := w.sched.AdvanceTo(to); err != nil {
			return ClockView{}, clockError(err)
		}
	}
	w.emitClock()
	return w.Clock(), nil
}

// AdvanceBy moves a manual clock forward by a duration ("90s", "1d"), firing every
// transition due by then in time order.
func (w *World) AdvanceBy(by *string) (ClockView, error) {
	if by == nil {
		return ClockView{}, apperr.New(apperr.InvalidRequest, `field "by" is required: a duration such as "90s" or "1d"`)
	}
	d, err := clock.ParseDuration(*by)
	if err != nil {
		return ClockView{}, apperr.New(apperr.InvalidRequest, `field "by": `+err.Error())
	}
	if _, err := w.Advance(d); err != nil {
		return ClockView{}, err
	}
	return w.Clock(), nil
}

// Advance moves a manual clock forward by d, firing every due transition in order.
func (w *World) Advance(d time.Duration) (time.Time, error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	t, err := w.sched.Advance(d)
	if err == nil {
		w.emitClock()
	}
	return t, clockError(err)
}

// clockError words the clock's refusals for the client.
func clockError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, clock.ErrNotManual):
		return apperr.New(apperr.InvalidRequest, `the clock is in real mode; set {"mode":"manual"} first`)
	case errors.Is(err, clock.ErrBackwards):
		return apperr.New(apperr.InvalidRequest, "the clock never moves backwards")
	case errors.Is(err, clock.ErrTooFar):
		return apperr.New(apperr.InvalidRequest, clock.ErrTooFar.Error())
	}
	return err
}

// fireDue runs every transition due by now, so what a caller reads is exact whatever
// the background goroutine's latency. Every read and write of the world calls it first.
func (w *World) fireDue() { w.sched.FireDue() }
