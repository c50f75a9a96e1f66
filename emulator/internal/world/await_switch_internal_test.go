package world

import (
	"context"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// An await that began on a manual clock (where any emulated timeout is allowed: it
// costs no wall time) and found the clock switched to a running one when its turn at
// the clock lock came waits in wall time: at most MaxAwaitWall of it, never the whole
// 1000 h it asked for. The bound is seen through wallTimeout, without waiting for it.
func TestAwaitSwitchedToRealIsBounded(t *testing.T) {
	var asked []time.Duration
	wallTimeout = func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
		asked = append(asked, d)
		ctx, cancel := context.WithCancel(ctx)
		cancel() // the wait ends at once: the test looks only at its bound
		return ctx, cancel
	}
	t.Cleanup(func() { wallTimeout = context.WithTimeout })
	for _, tc := range []struct {
		mode    string
		timeout time.Duration
		want    time.Duration
	}{
		{"real", 1000 * time.Hour, MaxAwaitWall},
		{"real", time.Minute, time.Minute},
		{"scaled:10", 1000 * time.Hour, MaxAwaitWall},
		{"scaled:10", 100 * time.Minute, 10 * time.Minute},
	} {
		reg, err := scenario.NewRegistry()
		if err != nil {
			t.Fatal(err)
		}
		w, err := New(Config{ClockMode: clock.Manual, ClockStart: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), Scenarios: reg,
			Fixtures: func() (state.Snapshot, error) { return state.Snapshot{}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		mode, err := clock.ParseMode(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		w.clock.SetMode(mode) // the switch, before the await's turn at the clock lock
		asked = asked[:0]
		ok, err := w.awaitManualOrSwitched(context.Background(), tc.timeout, func() bool { return false })
		w.Close()
		if ok || err != nil {
			t.Fatalf("%s: ok %v, err %v", tc.mode, ok, err)
		}
		if len(asked) != 1 || asked[0] != tc.want {
			t.Errorf("%s, timeout %s: waited up to %v of wall time, want %s", tc.mode, tc.timeout, asked, tc.want)
		}
	}
}
