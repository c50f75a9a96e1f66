package emulator_test

import (
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// A journaled request is dated at its end and timed from its start to its end, a
// fault's delay included: on a real clock its time is the wall's when it was answered
// (after the delay), on a manual clock the clock's, which the wall's delay does not
// move, on a scaled clock the emulated time at its end (the delay times N).
func TestJournalTimeOfADelayedRequest(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	for _, mode := range []clock.Mode{clock.Real, clock.Manual, clock.ScaledMode(10)} {
		e := newEnv(t, func(o *emulator.Options) {
			if o.ClockMode = mode; mode == clock.Real {
				o.ClockStart = time.Time{} // the wall itself
			}
		})
		clockNow := func() time.Time {
			now, err := time.Parse(time.RFC3339Nano, e.get("/_emulator/clock", "").JSON(t)["now"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return now
		}
		mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"operation": "listProjects"}, "delay": delay.String(), "times": 1}), 201)
		before := clockNow().Truncate(time.Millisecond)
		mustStatus(t, e.get("/v1/projects", "t-read"), 200)
		after := clockNow()
		es := journalOf(t, e, "?path=/v1/projects")
		if len(es) != 1 {
			t.Fatalf("%s: %d entries", mode, len(es))
		}
		got := es[0]
		if got.DurationMS < float64(delay.Milliseconds()) {
			t.Errorf("%s: duration_ms %v, less than the delay of %v", mode, got.DurationMS, delay)
		}
		earliest := before.Add(delay)
		switch mode {
		case clock.Manual:
			earliest = before
		case clock.ScaledMode(10):
			earliest = before.Add(10 * delay)
		}
		if got.Time.Before(earliest) || got.Time.After(after) {
			t.Errorf("%s: the entry at %v, not between %v and %v", mode, got.Time, earliest, after)
		}
		if mode == clock.Manual && !got.Time.Equal(before) {
			t.Errorf("manual clock: the entry at %v, the clock at %v", got.Time, before)
		}
	}
}
