package clock

import (
	"slices"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"real", "real", true},
		{"manual", "manual", true},
		{"auto", "auto", true},
		{"scaled:100", "scaled:100", true},
		{"scaled:1", "scaled:1", true},
		{"scaled:10000", "scaled:10000", true},
		{"scaled:2.5", "scaled:2.5", true},
		{"scaled:100.0", "scaled:100", true},
		{"scaled", "", false},
		{"scaled:", "", false},
		{"scaled:0", "", false},
		{"scaled:0.5", "", false},
		{"scaled:10001", "", false},
		{"scaled:NaN", "", false},
		{"scaled:Inf", "", false},
		{"scaled:-5", "", false},
		{"Manual", "", false},
		{"fast", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err == nil) != tt.ok || string(got) != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	for _, m := range []struct {
		mode   Mode
		kind   Mode
		rate   float64
		stands bool
	}{{Real, Real, 1, false}, {Manual, Manual, 0, true}, {Auto, Auto, 0, true}, {ScaledMode(100), Scaled, 100, false}} {
		if m.mode.Kind() != m.kind || m.mode.Rate() != m.rate || m.mode.Stands() != m.stands {
			t.Errorf("%s: kind %s rate %v stands %v", m.mode, m.mode.Kind(), m.mode.Rate(), m.mode.Stands())
		}
	}
}

func TestScaledClockRunsRateTimesTheWall(t *testing.T) {
	wall := &fakeWall{t0}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newClock(wall.now, ScaledMode(100), start)
	wall.t = wall.t.Add(60 * time.Millisecond)
	if got, want := c.Now(), start.Add(6*time.Second); !got.Equal(want) {
		t.Fatalf("after 60 ms of wall at 100x: %v, want %v", got, want)
	}
	if got := c.WallFor(6 * time.Second); got != 60*time.Millisecond {
		t.Fatalf("WallFor(6s) = %v, want 60ms", got)
	}
	// a new rate takes over from the present: time never jumps
	c.SetMode(ScaledMode(10))
	wall.t = wall.t.Add(time.Second)
	if got, want := c.Now(), start.Add(16*time.Second); !got.Equal(want) {
		t.Fatalf("after 1 s more at 10x: %v, want %v", got, want)
	}
	// a reset keeps the present and the first rate
	c.Reset()
	wall.t = wall.t.Add(10 * time.Millisecond)
	if got, want := c.Now(), start.Add(17*time.Second); !got.Equal(want) {
		t.Fatalf("after a reset and 10 ms at 100x: %v, want %v", got, want)
	}
}

// TestSwitchingModesNeverMovesBackwards switches through every mode while the wall runs
// on, and checks that the emulated time only ever moves forward.
func TestSwitchingModesNeverMovesBackwards(t *testing.T) {
	wall := &fakeWall{t0}
	c := newClock(wall.now, Real, time.Time{})
	last := c.Now()
	for i, m := range []Mode{ScaledMode(1000), Manual, ScaledMode(2), Auto, Real, ScaledMode(10000), Real, Auto, Manual, Real} {
		wall.t = wall.t.Add(time.Duration(i+1) * 7 * time.Millisecond)
		c.SetMode(m)
		if now := c.Now(); now.Before(last) {
			t.Fatalf("switch %d to %s moved the clock back from %v to %v", i, m, last, now)
		} else {
			last = now
		}
		wall.t = wall.t.Add(3 * time.Millisecond)
		if now := c.Now(); now.Before(last) {
			t.Fatalf("in %s the clock moved back from %v to %v", m, last, now)
		} else {
			last = now
		}
	}
}

func TestScaledClockStopsAtTheLimit(t *testing.T) {
	wall := &fakeWall{t0}
	c := newClock(wall.now, ScaledMode(MaxRate), Limit.Add(-time.Hour))
	wall.t = wall.t.Add(time.Hour)
	if got := c.Now(); !got.Equal(Limit) {
		t.Fatalf("Now = %v, want the limit %v", got, Limit)
	}
}

// TestAutoJumpsToInFlightEventsWhenIdle drives an auto clock's step by hand on a wall
// that moves only when told: it waits out the idle time, jumps to the next in-flight
// event's instant (not to the wall's), never to a periodic one, and stands still with
// nothing in flight.
func TestAutoJumpsToInFlightEventsWhenIdle(t *testing.T) {
	wall := &fakeWall{t0}
	c := newClock(wall.now, Auto, t0)
	s := NewScheduler(c)
	s.AutoIdle = 20 * time.Millisecond
	var fired []string
	s.At(t0.Add(time.Hour), func(time.Time) { fired = append(fired, "renewal") })
	if wait := s.autoStep(); wait != time.Hour || !c.Now().Equal(t0) {
		t.Fatalf("with only a periodic event pending: waited %v, clock %v", wait, c.Now())
	}
	s.AtInFlight(t0.Add(2*time.Second), func(time.Time) { fired = append(fired, "building") })
	s.AtInFlight(t0.Add(6*time.Second), func(time.Time) { fired = append(fired, "ready") })

	s.FireDue() // a request: the world is busy
	wall.t = wall.t.Add(5 * time.Millisecond)
	if wait := s.autoStep(); wait != 15*time.Millisecond || !c.Now().Equal(t0) {
		t.Fatalf("5 ms after a request: waited %v, clock %v; want 15ms and no move", wait, c.Now())
	}
	wall.t = wall.t.Add(15 * time.Millisecond)
	if s.autoStep(); !c.Now().Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("idle: clock %v, want the first step's instant", c.Now())
	}
	// after a jump the world gets a whole idle time before the next one
	if wait := s.autoStep(); wait != 20*time.Millisecond || !c.Now().Equal(t0.Add(2*time.Second)) {
		t.Fatalf("right after a jump: waited %v, clock %v", wait, c.Now())
	}
	wall.t = wall.t.Add(20 * time.Millisecond)
	s.autoStep()
	if !c.Now().Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("clock %v, want the second step's instant", c.Now())
	}
	wall.t = wall.t.Add(time.Minute)
	if wait := s.autoStep(); wait != time.Hour || !c.Now().Equal(t0.Add(6*time.Second)) {
		t.Fatalf("nothing in flight: waited %v, clock %v; the renewal must not pull it", wait, c.Now())
	}
	if want := []string{"building", "ready"}; len(fired) != 2 || fired[0] != want[0] || fired[1] != want[1] {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	// an advance past the periodic event fires it, and an auto clock may be advanced
	if _, err := s.Advance(time.Hour); err != nil || len(fired) != 3 {
		t.Fatalf("advance: %v, fired %v", err, fired)
	}
	if _, ok := s.NextInFlight(); ok {
		t.Fatal("an in-flight event is left after all fired")
	}
}

// TestInFlightHeapFollowsTheEvents checks that the in-flight events' heap stays the
// in-flight subset of the events across interleaved pops and a clear.
func TestInFlightHeapFollowsTheEvents(t *testing.T) {
	c := newClock((&fakeWall{t0}).now, Manual, t0)
	s := NewScheduler(c)
	for i := range 50 {
		at := t0.Add(time.Duration((i*37)%50) * time.Second)
		if i%3 == 0 {
			s.AtInFlight(at, func(time.Time) {})
		} else {
			s.At(at, func(time.Time) {})
		}
	}
	for step := range 60 {
		next, ok := s.NextInFlight()
		// the next in-flight instant is never before the next event of all
		if all, _ := s.NextAt(); ok && next.Before(all) {
			t.Fatalf("step %d: in-flight %v before the first event %v", step, next, all)
		}
		if _, err := s.Advance(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("%d events left", s.Len())
	}
	if _, ok := s.NextInFlight(); ok {
		t.Fatal("in-flight events left after every event fired")
	}
	s.AtInFlight(t0.Add(time.Hour), func(time.Time) {})
	s.Clear()
	if _, ok := s.NextInFlight(); ok {
		t.Fatal("Clear kept an in-flight event")
	}
}

// The in-flight heap is built only when first asked for (an auto clock), from the events
// pending then, and kept from then on: the earliest in-flight instant is the same
// whenever it is first asked.
func TestInFlightHeapBuiltWhenFirstAsked(t *testing.T) {
	for ask := range 8 { // first asked after ask one-second advances
		c := newClock((&fakeWall{t0}).now, Manual, t0)
		s := NewScheduler(c)
		var want []time.Time // the in-flight instants, in order
		for i := range 30 {
			at := t0.Add(time.Duration((i*7)%13) * time.Second)
			if i%2 == 0 {
				s.AtInFlight(at, func(time.Time) {})
				want = append(want, at)
			} else {
				s.At(at, func(time.Time) {})
			}
		}
		slices.SortFunc(want, time.Time.Compare)
		for step := range 14 {
			if step >= ask {
				next, ok := s.NextInFlight()
				now := c.Now()
				i := slices.IndexFunc(want, func(at time.Time) bool { return !at.Before(now) && !(at.Equal(now) && step > 0) })
				if i < 0 {
					if ok {
						t.Fatalf("ask %d, step %d: in flight at %v, want none", ask, step, next)
					}
				} else if !ok || !next.Equal(want[i]) {
					t.Fatalf("ask %d, step %d: in flight at %v, %v, want %v", ask, step, next, ok, want[i])
				}
			}
			if _, err := s.Advance(time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzParseMode: whatever a flag, a namespace or a bundle says, ParseMode either refuses
// it or gives a canonical mode that reads back as itself, with a rate in its bounds.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"real", "manual", "auto", "scaled:100", "scaled:2.5", "scaled:1e3", "scaled:0x10", "scaled:+5", "scaled: 5", "scaled:5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		again, err := ParseMode(string(m))
		if err != nil || again != m {
			t.Fatalf("%q → %q, which reads back as %q, %v", s, m, again, err)
		}
		if m.Kind() == Scaled && !(m.Rate() >= MinRate && m.Rate() <= MaxRate) {
			t.Fatalf("%q → rate %v", s, m.Rate())
		}
	})
}
