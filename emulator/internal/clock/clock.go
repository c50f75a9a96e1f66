// Package clock is the emulator's sense of time: a real clock that may start at a
// chosen instant, a scaled clock that runs N times as fast as the wall, a manual clock
// that moves only when told, and an auto clock (a manual one that jumps to the next
// in-flight transition when its world is idle), plus a scheduler of due transitions
// that fires in time order on any of them.
package clock

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode says how the clock moves: "real", "manual", "auto", or "scaled:N" (a scaled
// clock carries its rate in its mode, so that one string says everything a flag, a
// namespace, a testkit option or a bundle needs to say).
type Mode string

const (
	// Real moves with the wall clock: it is wall time, or wall time plus the offset of
	// a chosen start.
	Real Mode = "real"
	// Manual moves only on Advance or Set.
	Manual Mode = "manual"
	// Auto is a manual clock that its scheduler moves to the next in-flight
	// transition whenever the world has been idle for the scheduler's AutoIdle.
	Auto Mode = "auto"
	// Scaled is the kind of a "scaled:N" mode: emulated time runs N times as fast as
	// the wall. Use ScaledMode to make one.
	Scaled Mode = "scaled"
)

// MinRate and MaxRate bound a scaled clock's rate.
const (
	MinRate = 1
	MaxRate = 10000
)

// Modes is what ParseMode accepts, for messages.
const Modes = `real, manual, auto or scaled:N (N from 1 to 10000)`

// ScaledMode is the mode of a clock running rate times as fast as the wall.
func ScaledMode(rate float64) Mode {
	return Mode("scaled:" + strconv.FormatFloat(rate, 'f', -1, 64))
}

// ParseMode reads "real", "manual", "auto" or "scaled:N" (1 ≤ N ≤ 10,000), and gives
// the mode in its canonical spelling.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Real, Manual, Auto:
		return Mode(s), nil
	case Scaled:
		return "", fmt.Errorf("clock mode %q needs its rate: scaled:N, N from %d to %d", s, MinRate, MaxRate)
	}
	if rest, ok := strings.CutPrefix(s, "scaled:"); ok {
		rate, err := ParseRate(rest)
		if err != nil {
			return "", err
		}
		return ScaledMode(rate), nil
	}
	return "", fmt.Errorf("clock mode %q: want %s", s, Modes)
}

// ParseRate reads a scaled clock's rate: a number from MinRate to MaxRate.
func ParseRate(s string) (float64, error) {
	rate, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(rate) {
		return 0, fmt.Errorf("clock rate %q: want a number from %d to %d", s, MinRate, MaxRate)
	}
	return CheckRate(rate)
}

// CheckRate checks a scaled clock's rate.
func CheckRate(rate float64) (float64, error) {
	if !(rate >= MinRate && rate <= MaxRate) {
		return 0, fmt.Errorf("clock rate %v: want a number from %d to %d", rate, MinRate, MaxRate)
	}
	return rate, nil
}

// Kind is the mode without its rate: Real, Manual, Auto or Scaled.
func (m Mode) Kind() Mode {
	if strings.HasPrefix(string(m), "scaled:") {
		return Scaled
	}
	return m
}

// Rate is how many emulated seconds pass in a wall second: a scaled clock's N, 1 for
// a real clock, and 0 for a clock that stands (manual, auto).
func (m Mode) Rate() float64 {
	switch m {
	case Real:
		return 1
	case Manual, Auto:
		return 0
	}
	r, err := strconv.ParseFloat(strings.TrimPrefix(string(m), "scaled:"), 64)
	if err != nil {
		return 1
	}
	return r
}

// Stands reports whether the clock stands still between moves it is told to make
// (manual) or makes itself (auto): such a clock can be advanced and set, and awaits
// move it rather than wait for it.
func (m Mode) Stands() bool { return m == Manual || m == Auto }

// Limit is the latest instant a clock may show: far enough for any test, near enough
// that Unix nanoseconds, RFC 3339 and rate-limit arithmetic stay exact.
var Limit = time.Date(MaxYear, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxYear is the first year no emulated time reaches: the one bound of the world's
// years (state checks timestamps against it, the clock stops before it), far inside
// what Unix nanoseconds hold.
const MaxYear = 2200

// ErrTooFar is returned when a clock would pass Limit.
var ErrTooFar = fmt.Errorf("the clock cannot pass the year %d", MaxYear)

// ErrBackwards is returned when a manual clock would be set to an earlier time.
var ErrBackwards = errors.New("the clock never moves backwards")

// Clock is an emulator clock. The zero value is not usable; use New.
//
// A real clock is the wall clock plus a fixed offset: zero unless the clock was given
// a start, so with no start it shows wall time exactly, never behind it. A scaled clock
// is an instant it passed at a wall instant, plus the wall time since then times its
// rate. A manual or auto clock is a frozen instant.
type Clock struct {
	wall    func() time.Time // the machine's time; replaceable in tests
	machine bool             // wall is time.Now: a caller's reading of it may stand in (NowAt)

	// the clock as it was made, restored by Reset
	startMode   Mode
	startAt     time.Time     // a manual, auto or scaled clock's start
	startOffset time.Duration // a real clock's offset from the wall

	mu sync.Mutex // serialises changes of st
	// st is the clock's state, replaced whole under mu and read without it: Now runs
	// several times in every request.
	st atomic.Pointer[clockState]
}

// clockState is a clock's mode and time; never modified once stored.
type clockState struct {
	mode   Mode
	kind   Mode          // mode.Kind(), kept to spare Now the parse
	rate   float64       // mode.Rate()
	base   time.Time     // the frozen time (manual, auto), or the scaled clock's anchor
	wallAt time.Time     // the wall time at which a scaled clock showed base
	offset time.Duration // emulated minus wall time (real)
}

// New returns a clock in mode starting at start. With a zero start a manual or auto
// clock starts at the wall clock now, truncated to the second, and a real or scaled
// clock at the wall clock itself. A real clock given a start runs from it: its offset
// from the wall is start minus the wall time at New, kept for the clock's life.
func New(mode Mode, start time.Time) *Clock {
	c := newClock(time.Now, mode, start)
	c.machine = true
	return c
}

func newClock(wall func() time.Time, mode Mode, start time.Time) *Clock {
	c := &Clock{wall: wall, startMode: mode}
	now := c.wallNow()
	switch kind := mode.Kind(); {
	case kind == Real && !start.IsZero():
		c.startOffset = start.Sub(now)
	case kind == Real:
	case start.IsZero() && kind == Scaled:
		c.startAt = now
	case start.IsZero():
		c.startAt = now.Truncate(time.Second)
	default:
		c.startAt = start.UTC()
	}
	c.st.Store(c.state(mode, c.startAt, now, c.startOffset))
	return c
}

// state is the state of a clock in mode that shows at when the wall shows wall (or,
// for a real clock, whose emulated time is the wall plus offset).
func (c *Clock) state(mode Mode, at, wall time.Time, offset time.Duration) *clockState {
	return &clockState{mode: mode, kind: mode.Kind(), rate: mode.Rate(), base: at, wallAt: wall, offset: offset}
}

// wallNow is the machine's time in UTC, without a monotonic reading, so that a real
// clock shows exactly what the wall shows.
func (c *Clock) wallNow() time.Time { return c.wall().UTC().Round(0) }

// Now is the emulated time, in UTC.
func (c *Clock) Now() time.Time { return c.st.Load().now(c) }

// NowAt is Now for a caller that has just read the machine's time (read, from
// time.Now: a request's start): a real clock on the machine's wall takes its time from
// that reading rather than reading the wall again, which costs about 0.1 µs on the
// machines measured, where a request read it four times. A reading from before the
// clock's last change (or none: the zero time) is not used, nor one on another kind of
// clock or on a clock with another wall (tests): then it is Now.
func (c *Clock) NowAt(read time.Time) time.Time { return c.st.Load().nowAt(c, read) }

// NowWallAt is NowAt(read), and whether it is the machine's wall time itself (a real
// clock with no offset): then an HTTP answer's Date, which net/http writes from the
// wall, already says the emulated time.
func (c *Clock) NowWallAt(read time.Time) (time.Time, bool) {
	st := c.st.Load()
	return st.nowAt(c, read), st.kind == Real && st.offset == 0
}

func (st *clockState) nowAt(c *Clock, read time.Time) time.Time {
	if st.kind == Real && c.machine && !read.Before(st.wallAt) {
		return read.UTC().Round(0).Add(st.offset)
	}
	return st.now(c)
}

func (st *clockState) now(c *Clock) time.Time {
	switch st.kind {
	case Real:
		return c.wallNow().Add(st.offset)
	case Scaled:
		t := st.base.Add(time.Duration(float64(c.wallNow().Sub(st.wallAt)) * st.rate))
		if t.After(Limit) {
			return Limit
		}
		return t
	}
	return st.base
}

// Mode is the clock's current mode.
func (c *Clock) Mode() Mode { return c.st.Load().mode }

// WallFor is how long the wall takes to pass d of emulated time: d on a real clock,
// d/N on a scaled one, and d on a clock that stands (it does not move by itself, so the
// wall is the only measure left).
func (c *Clock) WallFor(d time.Duration) time.Duration {
	if st := c.st.Load(); st.kind == Scaled {
		return time.Duration(float64(d) / st.rate)
	}
	return d
}

// SetMode switches mode, keeping the current emulated time: a real clock frozen becomes
// manual at that instant; a manual clock released runs on from where it stood; a
// scaled clock takes its new rate from the present on. Time never moves backwards.
func (c *Clock) SetMode(m Mode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := c.wallNow()
	now := c.st.Load().now(c)
	c.st.Store(c.state(m, now, wall, now.Sub(wall)))
}

// Reset returns the clock to how New made it, for a world's reset: a manual or auto
// clock goes back to its start, backwards included; a real clock keeps running wall
// time (plus the offset it was made with), and a scaled clock keeps its present and
// its first rate, so a reset never rewinds a running clock and rate-limit reset times
// stay ahead of the Date header.
func (c *Clock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := c.wallNow()
	at := c.startAt
	if c.startMode.Kind() == Scaled {
		at = c.st.Load().now(c)
	}
	c.st.Store(c.state(c.startMode, at, wall, c.startOffset))
}

// set moves a clock that stands to t; it never moves backwards.
func (c *Clock) set(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if !st.mode.Stands() {
		return errors.New("only a manual or auto clock can be set")
	}
	if t.Before(st.base) {
		return ErrBackwards
	}
	if t.After(Limit) {
		return ErrTooFar
	}
	c.st.Store(c.state(st.mode, t.UTC(), st.wallAt, st.offset))
	return nil
}

// maxDays keeps a day count far from time.Duration's limit of about 292 years.
const maxDays = 36500

// ParseDuration reads a Go duration with an extra unit "d" for days ("90d", "1d12h").
// Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		days, err := strconv.ParseUint(s[:i], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", orig)
		}
		if days > maxDays {
			return 0, fmt.Errorf("duration %q is too long (at most %d days)", orig, maxDays)
		}
		total = time.Duration(days) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q", orig)
	}
	if d < 0 || s[0] == '-' {
		return 0, fmt.Errorf("negative duration %q", orig)
	}
	if total+d < total {
		return 0, fmt.Errorf("duration %q is too long", orig)
	}
	return total + d, nil
}

// Start is how the clock started: its mode, and a manual, auto or scaled clock's start
// (zero for a real one).
func (c *Clock) Start() (Mode, time.Time) { return c.startMode, c.startAt }

// Jump makes the clock stand at t in mode (Manual unless mode is Auto), backwards
// included: a failure bundle's replay puts the clock where the bundle's world stood.
// The scheduler's events must be cleared or replaced by the caller.
func (c *Clock) Jump(t time.Time, mode Mode) error {
	if t.After(Limit) {
		return ErrTooFar
	}
	if mode != Auto {
		mode = Manual
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := c.wallNow()
	c.st.Store(c.state(mode, t.UTC(), wall, t.Sub(wall)))
	return nil
}
