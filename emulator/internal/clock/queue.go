package clock

// eventQueue is the scheduler's pending events: a binary heap, and beside it a few
// lanes, each a queue of events that were scheduled in their order (each after the
// last of its lane). The steps of lifecycles come that way: a create's next step at
// its instant plus a fixed delay, and each step's next one as it fires, so that under
// a stream of creates nearly every event joins a lane at its end and leaves it from its
// head, where the heap (a hundred thousand events pending in a busy world) would move
// it through twenty levels each way. An event that fits no lane goes to the heap, or
// takes a lane whose events are all after it, which go to the heap (reclaim).
//
// The earliest event is the earliest of the heap's top and the lanes' heads. No two
// events share an instant and a place (seq: Reserve and at hand out each once), so
// less orders them all, and the queue gives them in exactly the heap's order
// (TestEventQueueIsTheHeap).
type eventQueue struct {
	heap  eventHeap
	lanes [queueLanes]lane
	n     int // events in all
}

// queueLanes is how many lanes an eventQueue keeps. Lanes are not given by kind: push
// puts each event after the latest last event before it. Under a stream of creates two
// streams come in order (the steps scheduled at creates, and those scheduled as steps
// fire), so two lanes carry them, and the others take what else comes in order
// (domains' steps, certificates' renewals).
const queueLanes = 4

// reclaimMax is the most events reclaim moves from a lane to the heap at once.
const reclaimMax = 256

// lane is a first-in first-out queue of events in order: q[head:] are pending.
type lane struct {
	q    []event
	head int
}

func (l *lane) len() int { return len(l.q) - l.head }

func (l *lane) last() *event { return &l.q[len(l.q)-1] }

func (q *eventQueue) len() int { return q.n }

// push adds e: to the end of the lane whose last event is the latest one before e,
// else to an empty lane, else to a lane reclaimed from events all after e, else to the
// heap.
func (q *eventQueue) push(e event) {
	q.n++
	best, empty := -1, -1
	for i := range q.lanes {
		l := &q.lanes[i]
		switch {
		case l.len() == 0:
			if empty < 0 {
				empty = i
			}
		case l.last().less(&e) && (best < 0 || q.lanes[best].last().less(l.last())):
			best = i
		}
	}
	if best < 0 {
		best = empty
	}
	if best < 0 {
		best = q.reclaim(&e)
	}
	if best < 0 {
		q.heap.push(e)
		return
	}
	l := &q.lanes[best]
	if len(l.q) == cap(l.q) && 4*l.head >= len(l.q) {
		l.compact() // a quarter of its room or more behind its head: used, not grown
	}
	l.q = append(l.q, e)
}

// reclaim empties, into the heap, the shortest lane of at most reclaimMax events that
// are all after e, and returns it (-1: none is). Such a lane holds events far ahead (a
// certificate's renewal months on, several loaded out of order take every lane), after
// which no step of a stream fits it: without this, every lane could stay held until
// they fire, and every event go to the heap. An event leaves a lane for the heap at
// most once, so this costs no more than the heap would have; reclaimMax bounds one
// push's share of it (a busy stream's lane is never moved whole under the lock).
func (q *eventQueue) reclaim(e *event) int {
	at := -1
	for i := range q.lanes {
		l := &q.lanes[i]
		if n := l.len(); n <= reclaimMax && e.less(&l.q[l.head]) && (at < 0 || n < q.lanes[at].len()) {
			at = i
		}
	}
	if at >= 0 {
		l := &q.lanes[at]
		for _, x := range l.q[l.head:] {
			q.heap.push(x)
		}
		clear(l.q)
		l.q, l.head = l.q[:0], 0
	}
	return at
}

// compact moves l's pending events to the front of its room.
func (l *lane) compact() {
	if n := len(l.q) - l.head; cap(l.q) > keptRoom && n <= keptRoom/4 {
		l.q, l.head = append(make([]event, 0, 2*n), l.q[l.head:]...), 0
		return
	}
	n := copy(l.q, l.q[l.head:])
	clear(l.q[n:])
	l.q, l.head = l.q[:n], 0
}

// first is where the earliest event is: -1 for the heap's top, else its lane. The
// queue must not be empty.
func (q *eventQueue) first() int {
	at := -1
	var min *event
	if len(q.heap) > 0 {
		min = &q.heap[0]
	}
	for i := range q.lanes {
		l := &q.lanes[i]
		if l.len() > 0 && (min == nil || l.q[l.head].less(min)) {
			at, min = i, &l.q[l.head]
		}
	}
	return at
}

// peek is the earliest event, which stays in the queue; the queue must not be empty.
func (q *eventQueue) peek() *event {
	if i := q.first(); i >= 0 {
		l := &q.lanes[i]
		return &l.q[l.head]
	}
	return &q.heap[0]
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() event {
	q.n--
	i := q.first()
	if i < 0 {
		return q.heap.pop()
	}
	l := &q.lanes[i]
	e := l.q[l.head]
	l.q[l.head] = event{} // its task is no longer held
	l.head++
	switch {
	case l.head == len(l.q):
		l.q, l.head = l.q[:0], 0
		if cap(l.q) > keptRoom {
			l.q = nil // a burst's room goes with it
		}
	case l.head >= 1024 && 2*l.head >= len(l.q):
		// half of the lane is behind its head: moved to the front, so that a lane
		// never emptied (a steady stream) does not hold its dead events
		l.compact()
	}
	return e
}

// keptRoom is the most room for events a lane or the heap keeps once its events are
// gone: a burst (100,000 creates at once) leaves no megabytes behind in a quiet world.
// Beyond it, an emptied lane lets its array go, and a lane or heap down to a quarter of
// it moves to an array twice its events: once a burst, not at every halving of a drain.
const keptRoom = 4096

// each calls fn on every pending event, in no order.
func (q *eventQueue) each(fn func(e *event)) {
	for i := range q.heap {
		fn(&q.heap[i])
	}
	for i := range q.lanes {
		l := &q.lanes[i]
		for j := l.head; j < len(l.q); j++ {
			fn(&l.q[j])
		}
	}
}
