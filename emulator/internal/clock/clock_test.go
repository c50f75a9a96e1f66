package clock

import (
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"750ms", 750 * time.Millisecond, true},
		{"1d", 24 * time.Hour, true},
		{"90d", 90 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"0s", 0, true},
		{"0", 0, true},
		{"-1s", 0, false},
		{"-1d", 0, false},
		{"1d-1h", 0, false},
		{"", 0, false},
		{"d", 0, false},
		{"soon", 0, false},
		{"1w", 0, false},
		{"200000d", 0, false},
		{"36500d", 36500 * 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// fakeWall is a wall clock that moves only when told.
type fakeWall struct{ t time.Time }

func (w *fakeWall) now() time.Time { return w.t }

func TestRealClockFollowsWall(t *testing.T) {
	wall := &fakeWall{t0}
	c := newClock(wall.now, Real, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	wall.t = wall.t.Add(90 * time.Second)
	if got := c.Now(); !got.Equal(time.Date(2030, 1, 1, 0, 1, 30, 0, time.UTC)) {
		t.Fatalf("Now = %v", got)
	}
	c.SetMode(Manual)
	wall.t = wall.t.Add(time.Hour)
	if got := c.Now(); !got.Equal(time.Date(2030, 1, 1, 0, 1, 30, 0, time.UTC)) {
		t.Fatalf("manual clock moved with the wall: %v", got)
	}
	c.SetMode(Real)
	wall.t = wall.t.Add(time.Second)
	if got := c.Now(); !got.Equal(time.Date(2030, 1, 1, 0, 1, 31, 0, time.UTC)) {
		t.Fatalf("released clock: %v", got)
	}
}

// A real clock with no start is the wall clock itself, sub-second part included: it
// used to start at the wall time truncated to the second and lag by the rest.
func TestRealClockIsWallTime(t *testing.T) {
	wall := &fakeWall{time.Date(2026, 11, 21, 12, 0, 3, 834_000_000, time.UTC)}
	c := newClock(wall.now, Real, time.Time{})
	for range 3 {
		if got := c.Now(); !got.Equal(wall.t) {
			t.Fatalf("Now = %v, wall = %v", got, wall.t)
		}
		wall.t = wall.t.Add(1234567 * time.Nanosecond)
	}

	// the same with the machine's clock: never behind it
	real := New(Real, time.Time{})
	before := time.Now()
	got := real.Now()
	after := time.Now()
	if got.Before(before) || got.After(after) {
		t.Fatalf("real clock shows %v, between %v and %v on the wall", got, before, after)
	}
	if got.Location() != time.UTC {
		t.Fatalf("Now is in %v, want UTC", got.Location())
	}
}

func TestManualClockDefaultStart(t *testing.T) {
	wall := &fakeWall{time.Date(2026, 11, 21, 12, 0, 3, 834_000_000, time.UTC)}
	c := newClock(wall.now, Manual, time.Time{})
	wall.t = wall.t.Add(time.Hour)
	if got, want := c.Now(), time.Date(2026, 11, 21, 12, 0, 3, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("manual clock with no start shows %v, want the wall at New to the second, %v", got, want)
	}
}

// A reset rewinds a manual clock to its start; a real clock keeps running wall time
// (plus the offset of an explicit start), whatever was done to it meanwhile.
func TestReset(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		mode   Mode
		start  time.Time
		meddle func(*Clock)
		want   func(wall time.Time) time.Time
		mode2  Mode
	}{
		{"manual advanced", Manual, start, func(c *Clock) { c.set(start.Add(time.Hour)) },
			func(time.Time) time.Time { return start }, Manual},
		{"manual released", Manual, start, func(c *Clock) { c.SetMode(Real) },
			func(time.Time) time.Time { return start }, Manual},
		{"real", Real, time.Time{}, func(*Clock) {},
			func(w time.Time) time.Time { return w }, Real},
		{"real frozen and set", Real, time.Time{}, func(c *Clock) { c.SetMode(Manual); c.set(t0.Add(48 * time.Hour)) },
			func(w time.Time) time.Time { return w }, Real},
		{"real with a start", Real, start, func(c *Clock) { c.SetMode(Manual); c.set(start.Add(48 * time.Hour)) },
			func(w time.Time) time.Time { return start.Add(w.Sub(t0)) }, Real},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wall := &fakeWall{t0}
			c := newClock(wall.now, tt.mode, tt.start)
			wall.t = wall.t.Add(10 * time.Minute)
			tt.meddle(c)
			wall.t = wall.t.Add(10 * time.Minute)
			c.Reset()
			if got, want := c.Now(), tt.want(wall.t); !got.Equal(want) || c.Mode() != tt.mode2 {
				t.Fatalf("after Reset: %v (%s), want %v (%s)", got, c.Mode(), want, tt.mode2)
			}
			wall.t = wall.t.Add(time.Second)
			if got, want := c.Now(), tt.want(wall.t); !got.Equal(want) {
				t.Fatalf("a second later: %v, want %v", got, want)
			}
		})
	}
}

func TestAdvanceFiresInOrderAtEventTimes(t *testing.T) {
	c := New(Manual, t0)
	s := NewScheduler(c)
	var got []string
	at := func(d time.Duration, name string) {
		s.At(t0.Add(d), func(when time.Time) {
			if !c.Now().Equal(when) {
				t.Errorf("%s fired with the clock at %v, want %v", name, c.Now(), when)
			}
			got = append(got, name)
		})
	}
	at(3*time.Second, "c")
	at(time.Second, "a")
	at(time.Second, "b") // same instant: in the order scheduled
	at(10*time.Second, "late")
	// an event that schedules another one inside the same advance
	s.At(t0.Add(2*time.Second), func(time.Time) {
		got = append(got, "x")
		s.At(t0.Add(2500*time.Millisecond), func(time.Time) { got = append(got, "y") })
	})
	now, err := s.Advance(5 * time.Second)
	if err != nil || !now.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("Advance = %v, %v", now, err)
	}
	if want := "a b x y c"; join(got) != want {
		t.Fatalf("fired %q, want %q", join(got), want)
	}
	if s.Len() != 1 {
		t.Fatalf("%d pending, want 1", s.Len())
	}
	if _, err := s.Advance(-time.Second); err == nil {
		t.Error("negative advance accepted")
	}
	if _, err := s.AdvanceTo(t0); err != ErrBackwards {
		t.Errorf("AdvanceTo the past: %v", err)
	}
}

// An event scheduled later in a place reserved earlier fires where it would have, had
// it been scheduled when the place was reserved: before the events scheduled after the
// reservation at the same instant.
func TestReservedPlacesFireInOrder(t *testing.T) {
	c := New(Manual, t0)
	s := NewScheduler(c)
	var got []string
	first := s.Reserve(2) // a lifecycle of two steps, both at t0+1s
	s.At(t0.Add(time.Second), func(time.Time) { got = append(got, "later") })
	step := func(name string, then func()) Func {
		return func(time.Time) {
			got = append(got, name)
			if then != nil {
				then()
			}
		}
	}
	s.AtSeq(t0.Add(time.Second), first, step("step1", func() {
		s.AtSeq(t0.Add(time.Second), first+1, step("step2", nil), true)
	}), true)
	if at, ok := s.NextInFlight(); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("NextInFlight = %v, %v", at, ok)
	}
	if _, err := s.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	if want := "step1 step2 later"; join(got) != want {
		t.Fatalf("fired %q, want %q", join(got), want)
	}
	if _, ok := s.NextInFlight(); ok || s.Len() != 0 {
		t.Fatalf("%d left", s.Len())
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestStepAndFireDue(t *testing.T) {
	c := New(Manual, t0)
	s := NewScheduler(c)
	n := 0
	s.At(t0, func(time.Time) { n++ })
	s.At(t0.Add(time.Minute), func(time.Time) { n += 10 })
	s.FireDue()
	if n != 1 {
		t.Fatalf("FireDue fired %d, want the event due now", n)
	}
	if fired, _ := s.Step(t0.Add(30 * time.Second)); fired {
		t.Fatal("Step fired an event beyond its limit")
	}
	if fired, _ := s.Step(t0.Add(time.Hour)); !fired || n != 11 || !c.Now().Equal(t0.Add(time.Minute)) {
		t.Fatalf("Step: fired=%v n=%d now=%v", fired, n, c.Now())
	}
}

func TestAdvanceNeedsManual(t *testing.T) {
	s := NewScheduler(New(Real, t0))
	if _, err := s.Advance(time.Second); err != ErrNotManual {
		t.Fatalf("Advance on a real clock: %v", err)
	}
}

func TestRealSchedulerFires(t *testing.T) {
	c := New(Real, time.Time{})
	s := NewScheduler(c)
	s.Start()
	defer s.Close()
	done := make(chan struct{})
	s.At(c.Now().Add(5*time.Millisecond), func(time.Time) { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a due event never fired on a real clock")
	}
}

func TestConcurrentScheduling(t *testing.T) {
	c := New(Manual, t0)
	s := NewScheduler(c)
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				s.At(t0.Add(time.Duration(i)*time.Millisecond), func(time.Time) { mu.Lock(); n++; mu.Unlock() })
				s.FireDue()
			}
		}()
	}
	wg.Wait()
	s.Advance(time.Second)
	if n != 800 {
		t.Fatalf("fired %d, want 800", n)
	}
}

// BenchmarkAdvance100k: one clock advance firing 100,000 due transitions.
func BenchmarkAdvance100k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		c := New(Manual, t0)
		s := NewScheduler(c)
		for i := 0; i < 100_000; i++ {
			s.At(t0.Add(time.Duration(i%6000)*time.Millisecond), func(time.Time) {})
		}
		b.StartTimer()
		s.Advance(time.Minute)
	}
}

// Instants outside what Unix nanoseconds hold are clamped, not wrapped around.
func TestAtOutOfRange(t *testing.T) {
	c := New(Manual, t0)
	s := NewScheduler(c)
	var fired []string
	s.At(time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), func(time.Time) { fired = append(fired, "past") })
	s.At(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), func(time.Time) { fired = append(fired, "far") })
	s.FireDue()
	if len(fired) != 1 || fired[0] != "past" {
		t.Fatalf("fired %v, want only the overdue event", fired)
	}
}

// NowAt takes a real clock's time from a reading of the machine's time the caller has
// just made (a request's start), as Now would read it then; it reads the wall afresh
// for a reading from before the clock's last change, for no reading, on another kind
// of clock, and on a clock with another wall.
func TestNowAtUsesTheCallersReading(t *testing.T) {
	c := New(Real, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) // an offset from the wall
	read := time.Now()
	off := c.st.Load().offset
	if got, want := c.NowAt(read), read.UTC().Round(0).Add(off); !got.Equal(want) || got.Location() != time.UTC || got != got.Round(0) {
		t.Fatalf("NowAt(read) = %v, want %v in UTC without a monotonic reading", got, want)
	}
	if now, wall := c.NowWallAt(read); !now.Equal(read.UTC().Add(off)) || wall {
		t.Fatalf("NowWallAt = %v, %v", now, wall)
	}
	plain := New(Real, time.Time{})
	read = time.Now()
	if now, wall := plain.NowWallAt(read); !now.Equal(read) || !wall {
		t.Fatalf("NowWallAt of a clock on the wall = %v, %v; want %v, true", now, wall, read)
	}
	// a reading older than the clock's state, or none: read afresh
	stale := time.Now().Add(-time.Hour)
	before := time.Now()
	if got := plain.NowAt(stale); got.Before(before) {
		t.Fatalf("NowAt of a reading from before the clock's state = %v, before %v", got, before)
	}
	if got := plain.NowAt(time.Time{}); got.Before(before) {
		t.Fatalf("NowAt(zero) = %v, before %v", got, before)
	}
	// other kinds and other walls: Now
	m := New(Manual, t0)
	if got := m.NowAt(time.Now()); !got.Equal(t0) {
		t.Fatalf("manual NowAt = %v, want %v", got, t0)
	}
	wall := &fakeWall{t0}
	f := newClock(wall.now, Real, time.Time{})
	wall.t = t0.Add(time.Minute)
	if got := f.NowAt(time.Now()); !got.Equal(wall.t) {
		t.Fatalf("NowAt on a test's wall = %v, want its wall %v", got, wall.t)
	}
	s := newClock(wall.now, ScaledMode(10), t0)
	wall.t = wall.t.Add(time.Second)
	if got, want := s.NowAt(time.Now()), s.Now(); !got.Equal(want) {
		t.Fatalf("scaled NowAt = %v, want Now %v", got, want)
	}
}

// FireDue on a real clock fires, in order, what one reading of the clock finds due,
// then what fell due while that fired (a new reading), until a reading finds nothing
// due: a reading of the wall a batch, not one an event.
func TestFireDueReadsTheClockOnceABatch(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	wall, reads := base, 0
	c := newClock(func() time.Time { reads++; return wall }, Real, time.Time{})
	s := NewScheduler(c)
	var fired []int
	for i := range 50 {
		s.At(base.Add(-time.Duration(50-i)*time.Millisecond), func(time.Time) {
			fired = append(fired, i)
			if i == 49 {
				wall = base.Add(time.Second) // the batch took a second
			}
		})
	}
	s.At(base.Add(500*time.Millisecond), func(time.Time) { fired = append(fired, 50) }) // due meanwhile
	s.At(base.Add(time.Hour), func(time.Time) { fired = append(fired, 99) })
	reads = 0
	s.FireDue()
	if len(fired) != 51 {
		t.Fatalf("fired %v, want the 50 events due and the one due meanwhile", fired)
	}
	for i, n := range fired {
		if n != i {
			t.Fatalf("fired %v, out of order", fired)
		}
	}
	if reads > 3 {
		t.Errorf("%d readings of the wall for two batches", reads)
	}
}

// A reading of the clock taken before a replay (Jump back, events replaced under
// Exclusive) says nothing of what is due after it: FireDue, which waited for the replay
// to finish, fires nothing the rewound clock has not reached. The wall here takes the
// reading and runs the replay at once, as a bundle's replay between a request's reading
// and its FireDue would.
func TestFireDueAfterAJumpBackFiresNothingEarly(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	past := base.Add(-time.Hour)
	var s *Scheduler
	var c *Clock
	replay := false
	fired := false
	c = newClock(func() time.Time {
		if replay {
			replay = false
			s.Exclusive(func() {
				c.Jump(past, Manual)
				s.Clear()
				s.At(past.Add(time.Minute), func(time.Time) { fired = true })
			})
		}
		return base
	}, Real, time.Time{})
	s = NewScheduler(c)
	s.At(base.Add(-time.Second), func(time.Time) {}) // due: FireDue takes the lock
	replay = true
	s.FireDue()
	if fired {
		t.Fatalf("an event a minute after %v fired with the clock at %v", past, c.Now())
	}
}

// A clock rewound while a batch fires (a world's Reset rewinds a manual clock outside
// the scheduler's lock) stops the batch where the rewound clock stands, as a reading an
// event did.
func TestFireDueStopsAtAClockRewoundMidBatch(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newClock(func() time.Time { return base }, Manual, base.Add(time.Hour))
	s := NewScheduler(c)
	var fired []int
	s.At(base.Add(10*time.Minute), func(time.Time) {
		fired = append(fired, 1)
		c.Jump(base, Manual) // as Reset does, before the events are replaced
	})
	s.At(base.Add(20*time.Minute), func(time.Time) { fired = append(fired, 2) })
	s.FireDue()
	if len(fired) != 1 {
		t.Fatalf("fired %v with the clock rewound to %v after the first", fired, c.Now())
	}
}

// Events a batch's events schedule fire in time order with the rest of the batch when
// due by its reading (one earlier than the batch's next, before it), and not at all when
// not due by the clock: on a manual clock and on a scaled one.
func TestFireDueEventsScheduledDuringABatch(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []Mode{Manual, ScaledMode(60)} {
		wall := base
		c := newClock(func() time.Time { return wall }, mode, base.Add(4*time.Minute))
		s := NewScheduler(c)
		var fired []string
		at := func(m int, name string, then func()) {
			s.At(base.Add(time.Duration(m)*time.Minute), func(time.Time) {
				fired = append(fired, name)
				if then != nil {
					then()
				}
			})
		}
		at(1, "a", func() {
			at(2, "c", nil) // before b
			at(4, "d", nil) // due: the clock stands at 4
			at(5, "e", nil) // not due
		})
		at(3, "b", nil)
		s.FireDue()
		if got := strings.Join(fired, ""); got != "acbd" {
			t.Errorf("%v: fired %q, want acbd", mode, got)
		}
	}
}
