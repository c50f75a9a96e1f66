package clock

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Scheduler fires functions at emulated instants, in time order (ties in the order they
// were scheduled). On a real clock a goroutine fires them as they fall due; on a manual
// clock only Advance, Step and FireDue do. Firing is serialised: one function at a time.
type Scheduler struct {
	clock *Clock
	// OnPanic, when set before Start, hears of an event that panicked.
	OnPanic func(any)

	mu     sync.Mutex // guards events and seq
	events eventHeap
	seq    uint64
	// next is the instant of the earliest event in Unix nanoseconds (noEvent when
	// none), stored under mu at every change of events: requests read it on every
	// FireDue without taking mu.
	next atomic.Int64

	fireMu sync.Mutex // serialises firing, so transitions never interleave

	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	started  atomic.Bool
	stopOnce sync.Once
}

type event struct {
	at  int64 // Unix nanoseconds: compared far more often than read
	seq uint64
	fn  func(at time.Time)
}

func (e *event) less(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// eventHeap is a binary min-heap of events, written out rather than through
// container/heap's interface: one advance may pop 100,000 of them.
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	i := len(q) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q[i].less(&q[parent]) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = event{}
	q = q[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		m := l
		if r := l + 1; r < len(q) && q[r].less(&q[l]) {
			m = r
		}
		if !q[m].less(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// NewScheduler returns a scheduler on c. Call Start to fire on a real clock, Close to stop.
func NewScheduler(c *Clock) *Scheduler {
	s := &Scheduler{clock: c, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.next.Store(noEvent)
	return s
}

// schedulable bounds the instants events are kept at: Unix nanoseconds cover 1678 to
// 2262, and nothing before 1970 needs to be told from 1970 (it is overdue either way).
var (
	earliest = time.Unix(0, 0).UTC()
	latest   = time.Unix(0, math.MaxInt64).UTC()
)

// At schedules fn at t (clamped to 1970–2262). fn receives the instant it fires for.
func (s *Scheduler) At(t time.Time, fn func(at time.Time)) {
	if t.Before(earliest) {
		t = earliest
	} else if t.After(latest) {
		t = latest
	}
	s.mu.Lock()
	s.seq++
	s.events.push(event{at: t.UnixNano(), seq: s.seq, fn: fn})
	first := s.events[0].seq == s.seq
	s.changedLocked()
	s.mu.Unlock()
	if first {
		s.Wake()
	}
}

// Len is the number of pending events.
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// NextAt is the time of the earliest pending event.
func (s *Scheduler) NextAt() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, s.events[0].at).UTC(), true
}

// Clear drops every pending event.
func (s *Scheduler) Clear() {
	s.mu.Lock()
	s.events = nil
	s.changedLocked()
	s.mu.Unlock()
}

// noEvent is next's value while no event is pending. An event clamped to latest shares
// it, and is never due: the clock stops at Limit.
const noEvent = math.MaxInt64

// changedLocked publishes the earliest event's instant; called with mu held after
// every change of events.
func (s *Scheduler) changedLocked() {
	if len(s.events) == 0 {
		s.next.Store(noEvent)
		return
	}
	s.next.Store(s.events[0].at)
}

// popDue removes and returns the earliest event due at or before limit.
func (s *Scheduler) popDue(limit time.Time) (event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 || s.events[0].at > limit.UnixNano() {
		return event{}, false
	}
	e := s.events.pop()
	s.changedLocked()
	return e, true
}

// fire runs one event; a panic in it is reported to OnPanic, never allowed to take the
// process down from the background goroutine.
func (s *Scheduler) fire(e event) {
	defer func() {
		if r := recover(); r != nil && s.OnPanic != nil {
			s.OnPanic(r)
		}
	}()
	e.fn(time.Unix(0, e.at).UTC())
}

// Exclusive runs fn while no event fires, so that fn and a transition falling due at
// the same moment never interleave.
func (s *Scheduler) Exclusive(fn func()) {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	fn()
}

// FireDue fires every event due at or before the clock's present, in order. Requests call
// it first, so what they read is exact whatever the background goroutine's latency.
func (s *Scheduler) FireDue() {
	if next := s.next.Load(); next == noEvent || next > s.clock.Now().UnixNano() {
		return
	}
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	for {
		e, ok := s.popDue(s.clock.Now())
		if !ok {
			return
		}
		s.fire(e)
	}
}

// ErrNotManual is returned by operations that only a manual clock allows.
var ErrNotManual = errors.New("the clock is not in manual mode")

// Advance moves a manual clock forward by d, firing every event due by the new time in
// time order, with the clock standing at each event's instant while it fires.
func (s *Scheduler) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, ErrBackwards
	}
	if s.clock.Mode() != Manual {
		return time.Time{}, ErrNotManual
	}
	now := s.clock.Now()
	if d > Limit.Sub(now) {
		return time.Time{}, ErrTooFar
	}
	return s.AdvanceTo(now.Add(d))
}

// AdvanceTo moves a manual clock to target, firing what falls due on the way.
func (s *Scheduler) AdvanceTo(target time.Time) (time.Time, error) {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	if s.clock.Mode() != Manual {
		return time.Time{}, ErrNotManual
	}
	if target.Before(s.clock.Now()) {
		return time.Time{}, ErrBackwards
	}
	if target.After(Limit) {
		return time.Time{}, ErrTooFar
	}
	for {
		e, ok := s.popDue(target)
		if !ok {
			break
		}
		if at := time.Unix(0, e.at).UTC(); at.After(s.clock.Now()) {
			if err := s.clock.set(at); err != nil {
				return time.Time{}, err
			}
		}
		s.fire(e)
	}
	if err := s.clock.set(target); err != nil {
		return time.Time{}, err
	}
	return target, nil
}

// Step moves a manual clock to the next pending event, if it is due by limit, and fires
// every event due at that instant. It reports whether it fired anything.
func (s *Scheduler) Step(limit time.Time) (bool, error) {
	next, ok := s.NextAt()
	if !ok || next.After(limit) {
		return false, nil
	}
	if now := s.clock.Now(); next.Before(now) {
		next = now
	}
	_, err := s.AdvanceTo(next)
	return err == nil, err
}

// Wake makes the background goroutine look at the clock again (after a mode change).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the goroutine that fires events on a real clock. It returns at once.
func (s *Scheduler) Start() {
	if s.started.CompareAndSwap(false, true) {
		go s.loop()
	}
}

func (s *Scheduler) loop() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Hour
		if s.clock.Mode() == Real {
			s.FireDue()
			if next, ok := s.NextAt(); ok {
				wait = max(next.Sub(s.clock.Now()), 0)
			}
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.wake:
		case <-s.stop:
			return
		}
	}
}

// Close stops the goroutine started by Start and waits for it.
func (s *Scheduler) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	if !s.started.Load() {
		return
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
}
