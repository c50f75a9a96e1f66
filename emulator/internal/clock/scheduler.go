package clock

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Scheduler fires functions at emulated instants, in time order (ties in the order they
// were scheduled). On a real or scaled clock a goroutine fires them as they fall due; on
// a manual clock only Advance, Step and FireDue do; on an auto clock the goroutine also
// moves the clock to the next in-flight event (one scheduled with AtInFlight) once no
// FireDue has been called for AutoIdle. Firing is serialised: one function at a time.
type Scheduler struct {
	clock *Clock
	// OnPanic, when set before Start, hears of an event that panicked.
	OnPanic func(any)
	// AutoIdle, set before Start, is how long an auto clock's world must be idle (no
	// FireDue) before the clock jumps to its next in-flight event; DefaultAutoIdle
	// when zero.
	AutoIdle time.Duration
	// AutoAdvance, set before Start, moves an auto clock to an instant on the
	// scheduler's behalf (the world wraps AdvanceTo in its own clock lock and tells
	// its watchers); AdvanceTo when nil.
	AutoAdvance func(to time.Time)

	mu     sync.Mutex // guards events, inFlight, inFlightKept and seq
	events eventQueue
	// inFlight holds the events of events that AtInFlight scheduled (the same at and
	// seq, no task): its top is the next instant an auto clock may jump to. It is built
	// on the first NextInFlight (only an auto clock asks) and kept from then on
	// (inFlightKept): a real clock's creates do not pay for it.
	inFlight     eventHeap
	inFlightKept bool
	seq          uint64
	// active is the wall time of the last FireDue on an auto clock, in Unix
	// nanoseconds: every read and write of a world calls FireDue first.
	active atomic.Int64
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
	at       int64 // Unix nanoseconds: compared far more often than read
	seq      uint64
	task     Task
	inFlight bool // a step of a lifecycle under way, which an auto clock jumps to
}

// Task is what an event runs: Fire receives the instant it fires for. A lifecycle is
// one Task that schedules its own next step as it fires (AtSeq), rather than a closure
// per step.
type Task interface{ Fire(at time.Time) }

// Func is a function as a Task.
type Func func(at time.Time)

// Fire calls f.
func (f Func) Fire(at time.Time) { f(at) }

// DefaultAutoIdle is how long an auto clock's world must be idle before it jumps.
const DefaultAutoIdle = 20 * time.Millisecond

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
	if cap(q) > keptRoom && len(q) <= keptRoom/4 {
		q = append(make(eventHeap, 0, 2*len(q)), q...) // after a burst (keptRoom)
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
// An auto clock never jumps to such an event on its own: periodic events (renewals,
// detachments) wait until something else moves the clock past them.
func (s *Scheduler) At(t time.Time, fn func(at time.Time)) { s.at(t, 0, Func(fn), false) }

// AtInFlight is At for a step of a lifecycle under way (a deployment building, a domain
// verifying, a certificate being issued): an auto clock jumps to it when idle.
func (s *Scheduler) AtInFlight(t time.Time, fn func(at time.Time)) { s.at(t, 0, Func(fn), true) }

// Reserve sets aside n places in the order of events (ties at one instant fire in the
// order they were scheduled) and returns the first; AtSeq schedules an event in one of
// them later. A lifecycle of n steps reserves its n places when it starts and schedules
// each step as the one before fires: its steps fire exactly where they would have, had
// all been scheduled at the start, with one event pending at a time instead of n.
func (s *Scheduler) Reserve(n int) uint64 {
	s.mu.Lock()
	first := s.seq + 1
	s.seq += uint64(n)
	s.mu.Unlock()
	return first
}

// AtSeq schedules task at t in the place seq (from Reserve), in flight or not (see
// AtInFlight).
func (s *Scheduler) AtSeq(t time.Time, seq uint64, task Task, inFlight bool) {
	s.at(t, seq, task, inFlight)
}

// at schedules task at t, in the place seq, or in the next place when seq is 0.
func (s *Scheduler) at(t time.Time, seq uint64, task Task, inFlight bool) {
	if t.Before(earliest) {
		t = earliest
	} else if t.After(latest) {
		t = latest
	}
	s.mu.Lock()
	if seq == 0 {
		s.seq++
		seq = s.seq
	}
	e := event{at: t.UnixNano(), seq: seq, task: task, inFlight: inFlight}
	s.events.push(e)
	if inFlight && s.inFlightKept {
		s.inFlight.push(event{at: e.at, seq: e.seq})
	}
	first := s.events.peek().seq == seq || (inFlight && s.inFlightKept && s.inFlight[0].seq == seq)
	s.changedLocked()
	s.mu.Unlock()
	if first {
		s.Wake()
	}
}

// Tasks calls fn on the task of every pending event, in no order, under the
// scheduler's lock: fn must not call the scheduler. Called inside Exclusive, it sees
// every task that will fire (none is between being taken and firing).
func (s *Scheduler) Tasks(fn func(Task)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events.each(func(e *event) { fn(e.task) })
}

// Len is the number of pending events (a lifecycle scheduled step by step counts one).
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events.len()
}

// NextAt is the time of the earliest pending event.
func (s *Scheduler) NextAt() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events.len() == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, s.events.peek().at).UTC(), true
}

// NextInFlight is the time of the earliest pending in-flight event.
func (s *Scheduler) NextInFlight() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inFlightKept {
		s.inFlight = nil
		s.events.each(func(e *event) {
			if e.inFlight {
				s.inFlight.push(event{at: e.at, seq: e.seq})
			}
		})
		s.inFlightKept = true
	}
	if len(s.inFlight) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, s.inFlight[0].at).UTC(), true
}

// Clear drops every pending event.
func (s *Scheduler) Clear() {
	s.mu.Lock()
	s.events, s.inFlight = eventQueue{}, nil
	s.changedLocked()
	s.mu.Unlock()
}

// noEvent is next's value while no event is pending. An event clamped to latest shares
// it, and is never due: the clock stops at Limit.
const noEvent = math.MaxInt64

// changedLocked publishes the earliest event's instant; called with mu held after
// every change of events.
func (s *Scheduler) changedLocked() {
	if s.events.len() == 0 {
		s.next.Store(noEvent)
		return
	}
	s.next.Store(s.events.peek().at)
}

// popDue removes and returns the earliest event due at or before limit.
func (s *Scheduler) popDue(limit time.Time) (event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events.len() == 0 || s.events.peek().at > limit.UnixNano() {
		return event{}, false
	}
	e := s.events.pop()
	if e.inFlight && s.inFlightKept { // the earliest event of all is the earliest in-flight one too
		s.inFlight.pop()
	}
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
	e.task.Fire(time.Unix(0, e.at).UTC())
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
func (s *Scheduler) FireDue() { s.FireDueAt(time.Time{}) }

// FireDueAt is FireDue for a caller that has just read the machine's time (see
// Clock.NowAt): whether anything is due is decided from that reading.
func (s *Scheduler) FireDueAt(read time.Time) {
	st := s.clock.st.Load()
	if st.mode == Auto {
		s.active.Store(s.clock.wallNow().UnixNano())
	}
	limit := st.nowAt(s.clock, read)
	if next := s.next.Load(); next == noEvent || next > limit.UnixNano() {
		return
	}
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	// what is due by one reading of the clock fires, then what fell due while it fired,
	// by a new reading, until one finds nothing due: a reading (about 0.1 µs) a batch
	// rather than one an event, where a batch is the steps of the creates of a
	// millisecond. A reading holds while the clock's state is the one it was taken
	// from (time only moves forward within one); a clock set, switched or rewound
	// meanwhile (a replay's Jump, a reset) is read again, so that nothing fires before
	// the clock stands past it.
	for {
		if cur := s.clock.st.Load(); cur != st {
			st, limit = cur, cur.now(s.clock)
		}
		e, ok := s.popDue(limit)
		if !ok {
			st = s.clock.st.Load()
			if limit = st.now(s.clock); !s.dueBy(limit) {
				return
			}
			continue
		}
		s.fire(e)
	}
}

// dueBy reports whether an event is due at or before limit.
func (s *Scheduler) dueBy(limit time.Time) bool {
	next := s.next.Load()
	return next != noEvent && next <= limit.UnixNano()
}

// ErrNotManual is returned by operations that only a clock that stands (manual, auto)
// allows.
var ErrNotManual = errors.New("the clock is not in manual mode")

// Advance moves a manual or auto clock forward by d, firing every event due by the new time in
// time order, with the clock standing at each event's instant while it fires.
func (s *Scheduler) Advance(d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, ErrBackwards
	}
	if !s.clock.Mode().Stands() {
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
	if !s.clock.Mode().Stands() {
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

// Start runs the goroutine that fires events on a real or scaled clock and moves an
// auto clock. It returns at once.
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
		switch s.clock.Mode().Kind() {
		case Real, Scaled:
			s.FireDue()
			if next, ok := s.NextAt(); ok {
				wait = max(s.clock.WallFor(next.Sub(s.clock.Now())), 0)
			}
		case Auto:
			wait = s.autoStep()
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

// autoStep moves an auto clock to its next in-flight event if its world has been idle
// for AutoIdle, and says how long to wait before looking again.
func (s *Scheduler) autoStep() time.Duration {
	next, ok := s.NextInFlight()
	if !ok {
		return time.Hour // At wakes the loop when an in-flight event is added
	}
	idle := s.AutoIdle
	if idle <= 0 {
		idle = DefaultAutoIdle
	}
	wall := s.clock.wallNow().UnixNano()
	if until := s.active.Load() + int64(idle) - wall; until > 0 {
		return time.Duration(until)
	}
	if now := s.clock.Now(); next.Before(now) {
		next = now
	}
	if s.AutoAdvance != nil {
		s.AutoAdvance(next)
	} else {
		s.AdvanceTo(next) //nolint:errcheck // a mode switched meanwhile: nothing to do
	}
	// a jump is a change the world's watchers may want to see before the next one:
	// wait a whole idle again
	s.active.Store(s.clock.wallNow().UnixNano())
	return idle
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
