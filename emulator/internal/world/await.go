package world

import (
	"context"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// pollEvery is how often a wait on a real clock looks at the condition again.
const pollEvery = 5 * time.Millisecond

// Await waits until cond holds, for at most timeout of emulated time. On a manual clock
// it advances the clock from due transition to due transition; on a real clock it waits.
// It returns whether cond held and the clock's time then.
func (w *World) Await(ctx context.Context, timeout time.Duration, cond func() (bool, error)) (bool, time.Time, error) {
	if w.Clock.Mode() == clock.Manual {
		return w.awaitManual(timeout, cond)
	}
	return w.awaitReal(ctx, timeout, cond)
}

func (w *World) awaitManual(timeout time.Duration, cond func() (bool, error)) (bool, time.Time, error) {
	w.Sched.FireDue()
	deadline := w.Clock.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil || ok {
			return ok, w.Clock.Now(), err
		}
		fired, err := w.Sched.Step(deadline)
		if err != nil {
			return false, w.Clock.Now(), err
		}
		if !fired {
			if _, err := w.Sched.AdvanceTo(deadline); err != nil {
				return false, w.Clock.Now(), err
			}
			ok, err := cond()
			return ok, w.Clock.Now(), err
		}
	}
}

func (w *World) awaitReal(ctx context.Context, timeout time.Duration, cond func() (bool, error)) (bool, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		w.Sched.FireDue()
		ok, err := cond()
		if err != nil || ok {
			return ok, w.Clock.Now(), err
		}
		select {
		case <-ctx.Done():
			return false, w.Clock.Now(), nil
		case <-tick.C:
		}
	}
}
