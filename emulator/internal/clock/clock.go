// Package clock is the emulator's sense of time: a real clock that may start at a
// chosen instant, or a manual clock that moves only when told, plus a scheduler of
// due transitions that fires in time order on either.
package clock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode says how the clock moves.
type Mode string

const (
	// Real moves with the wall clock: it is wall time, or wall time plus the offset of
	// a chosen start.
	Real Mode = "real"
	// Manual moves only on Advance or Set.
	Manual Mode = "manual"
)

// ParseMode reads "real" or "manual".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Real, Manual:
		return Mode(s), nil
	}
	return "", fmt.Errorf("clock mode %q: want real or manual", s)
}

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
// a start, so with no start it shows wall time exactly, never behind it. A manual
// clock is a frozen instant.
type Clock struct {
	wall func() time.Time // the machine's time; replaceable in tests

	// the clock as it was made, restored by Reset
	startMode   Mode
	startAt     time.Time     // a manual clock's start
	startOffset time.Duration // a real clock's offset from the wall

	mu sync.Mutex // serialises changes of st
	// st is the clock's state, replaced whole under mu and read without it: Now runs
	// several times in every request.
	st atomic.Pointer[clockState]
}

// clockState is a clock's mode and time; never modified once stored.
type clockState struct {
	mode   Mode
	base   time.Time     // the frozen time (manual; unused by a real clock)
	offset time.Duration // emulated minus wall time (real)
}

// New returns a clock in mode starting at start. With a zero start a manual clock
// starts at the wall clock now, truncated to the second, and a real clock is the wall
// clock itself. A real clock given a start runs from it: its offset from the wall is
// start minus the wall time at New, kept for the clock's life.
func New(mode Mode, start time.Time) *Clock {
	return newClock(time.Now, mode, start)
}

func newClock(wall func() time.Time, mode Mode, start time.Time) *Clock {
	c := &Clock{wall: wall, startMode: mode}
	now := c.wallNow()
	switch {
	case mode != Real && start.IsZero():
		c.startAt = now.Truncate(time.Second)
	case mode != Real:
		c.startAt = start.UTC()
	case !start.IsZero():
		c.startOffset = start.Sub(now)
	}
	c.st.Store(&clockState{mode: mode, base: c.startAt, offset: c.startOffset})
	return c
}

// wallNow is the machine's time in UTC, without a monotonic reading, so that a real
// clock shows exactly what the wall shows.
func (c *Clock) wallNow() time.Time { return c.wall().UTC().Round(0) }

// Now is the emulated time, in UTC.
func (c *Clock) Now() time.Time { return c.st.Load().now(c) }

// NowWall is Now, and whether it is the machine's wall time itself (a real clock with no
// offset): then an HTTP answer's Date, which net/http writes from the wall, already
// says the emulated time.
func (c *Clock) NowWall() (time.Time, bool) {
	st := c.st.Load()
	return st.now(c), st.mode == Real && st.offset == 0
}

func (st *clockState) now(c *Clock) time.Time {
	if st.mode == Manual {
		return st.base
	}
	return c.wallNow().Add(st.offset)
}

// Mode is the clock's current mode.
func (c *Clock) Mode() Mode { return c.st.Load().mode }

// SetMode switches mode, keeping the current emulated time: a real clock frozen becomes
// manual at that instant; a manual clock released runs on from where it stood.
func (c *Clock) SetMode(m Mode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.st.Load().now(c)
	c.st.Store(&clockState{mode: m, base: now, offset: now.Sub(c.wallNow())})
}

// Reset returns the clock to how New made it, for a world's reset: a manual clock goes
// back to its start, backwards included; a real clock keeps running wall time (plus
// the offset it was made with), so a reset never rewinds it and rate-limit reset times
// stay ahead of the Date header.
func (c *Clock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Store(&clockState{mode: c.startMode, base: c.startAt, offset: c.startOffset})
}

// set moves a manual clock to t; it never moves backwards.
func (c *Clock) set(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st.Load()
	if st.mode != Manual {
		return errors.New("only a manual clock can be set")
	}
	if t.Before(st.base) {
		return ErrBackwards
	}
	if t.After(Limit) {
		return ErrTooFar
	}
	c.st.Store(&clockState{mode: Manual, base: t.UTC(), offset: st.offset})
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

// Start is how the clock started: its mode, and a manual clock's start (zero for a real
// one).
func (c *Clock) Start() (Mode, time.Time) { return c.startMode, c.startAt }

// Jump makes the clock manual at t, backwards included: a failure bundle's replay puts
// the clock where the bundle's world stood. The scheduler's events must be cleared or
// replaced by the caller.
func (c *Clock) Jump(t time.Time) error {
	if t.After(Limit) {
		return ErrTooFar
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Store(&clockState{mode: Manual, base: t.UTC(), offset: t.Sub(c.wallNow())})
	return nil
}
