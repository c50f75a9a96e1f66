package world

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// ClockView is the clock as the control API shows it: its kind of mode (real, manual,
// scaled, auto) and a scaled clock's rate.
type ClockView struct {
	Now  state.Timestamp `json:"now"`
	Mode string          `json:"mode"`
	Rate float64         `json:"rate,omitempty"`
}

// Now is the emulated time.
func (w *World) Now() time.Time { return w.clock.Now() }

// Clock is the clock's time and mode.
func (w *World) Clock() ClockView {
	m := w.clock.Mode()
	v := ClockView{Now: state.Timestamp(w.clock.Now()), Mode: string(m.Kind())}
	if m.Kind() == clock.Scaled {
		v.Rate = m.Rate()
	}
	return v
}

// ClockMode is the clock's mode ("scaled:N" for a scaled clock).
func (w *World) ClockMode() clock.Mode { return w.clock.Mode() }

// ClockChange is a PUT /_emulator/clock request: a mode to switch to (with a scaled
// clock's rate), and a time to move a manual or auto clock to. All optional.
type ClockChange struct {
	Mode *string  `json:"mode"`
	Rate *float64 `json:"rate"`
	Now  *string  `json:"now"`
}

// modeOf is the mode a change asks for, given the current one.
func (ch ClockChange) modeOf(current clock.Mode) (clock.Mode, error) {
	if ch.Mode == nil && ch.Rate == nil {
		return current, nil
	}
	kind := current.Kind()
	if ch.Mode != nil {
		kind = clock.Mode(*ch.Mode)
		if strings.HasPrefix(*ch.Mode, "scaled:") {
			if ch.Rate != nil {
				return "", apperr.New(apperr.InvalidRequest, `give the rate either in "mode" ("scaled:N") or in "rate", not both`)
			}
			m, err := clock.ParseMode(*ch.Mode)
			if err != nil {
				return "", apperr.New(apperr.InvalidRequest, `field "mode": `+err.Error())
			}
			return m, nil
		}
	}
	switch kind {
	case clock.Real, clock.Manual, clock.Auto:
		if ch.Rate != nil {
			return "", apperr.Errorf(apperr.InvalidRequest, `field "rate" is for a scaled clock; the mode is %q`, kind)
		}
		return kind, nil
	case clock.Scaled:
		if ch.Rate == nil {
			if current.Kind() == clock.Scaled {
				return current, nil
			}
			return "", apperr.New(apperr.InvalidRequest, `a scaled clock needs field "rate": a number from 1 to 10000`)
		}
		rate, err := clock.CheckRate(*ch.Rate)
		if err != nil {
			return "", apperr.New(apperr.InvalidRequest, `field "rate": `+err.Error())
		}
		return clock.ScaledMode(rate), nil
	}
	msg := fmt.Sprintf(`field "mode" must be real, manual, scaled or auto, not %q`, *ch.Mode)
	if near := yamlcheck.Closest(*ch.Mode, []string{"real", "manual", "scaled", "auto"}); near != "" {
		msg += fmt.Sprintf(` (did you mean %q?)`, near)
	}
	return "", apperr.New(apperr.InvalidRequest, msg)
}

// SetClock switches the clock's mode and moves a manual or auto clock to a time, firing
// what falls due on the way. Every field is checked before anything changes.
func (w *World) SetClock(ch ClockChange) (ClockView, error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	mode, err := ch.modeOf(w.clock.Mode())
	if err != nil {
		return ClockView{}, err
	}
	var to time.Time
	if ch.Now != nil {
		t, err := time.Parse(time.RFC3339Nano, *ch.Now)
		if err != nil {
			return ClockView{}, apperr.New(apperr.InvalidRequest, `field "now" must be an RFC 3339 time`)
		}
		to = t.UTC()
		switch {
		case !mode.Stands():
			return ClockView{}, clockError(clock.ErrNotManual)
		case to.Before(w.clock.Now()):
			return ClockView{}, clockError(clock.ErrBackwards)
		case to.After(clock.Limit):
			return ClockView{}, clockError(clock.ErrTooFar)
		}
	}
	if mode != w.clock.Mode() {
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

// autoAdvance is the scheduler's jump of an auto clock to its next in-flight
// transition: under the clock lock like every other move, and told to watchers.
func (w *World) autoAdvance(to time.Time) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if w.clock.Mode() != clock.Auto {
		return
	}
	if now := w.clock.Now(); to.Before(now) {
		to = now
	}
	if _, err := w.sched.AdvanceTo(to); err == nil {
		w.emitClock()
	}
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
		return apperr.New(apperr.InvalidRequest, `the clock runs by itself (real or scaled mode); set {"mode":"manual"} or {"mode":"auto"} first`)
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

// Sleep waits for d of emulated time, until ctx is done, or until stop closes: d of
// wall time on a real clock, d/N on a scaled one; on a manual or auto clock, until the
// clock has been moved d past now (an auto clock jumps there once the world is idle,
// as to a lifecycle's next step). A fault's delay_clock: emulated sleeps here.
func (w *World) Sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) {
	if d <= 0 {
		return
	}
	var wake <-chan time.Time
	if w.clock.Mode().Stands() {
		due := make(chan time.Time, 1)
		w.sched.AtInFlight(w.clock.Now().Add(d), func(t time.Time) { due <- t })
		wake = due
	} else {
		t := time.NewTimer(w.clock.WallFor(d))
		defer t.Stop()
		wake = t.C
	}
	select {
	case <-wake:
	case <-ctx.Done():
	case <-stop:
	}
}

// WaitedOn tells the world that a client was told to come back after d (a 429's
// Retry-After): on an auto clock that instant is in flight, as a lifecycle's next step
// is, so the clock jumps there once the world is idle and the client's retry, whenever
// it comes, finds its window open. On other clocks it does nothing. One instant is kept
// per later instant, so a storm of 429s schedules no more than the clock has seconds.
func (w *World) WaitedOn(d time.Duration) {
	if w.clock.Mode() != clock.Auto {
		return
	}
	at := w.clock.Now().Add(d)
	for {
		last := w.waitedUntil.Load()
		if at.UnixNano() <= last {
			return
		}
		if w.waitedUntil.CompareAndSwap(last, at.UnixNano()) {
			break
		}
	}
	w.sched.AtInFlight(at, func(time.Time) {})
}
