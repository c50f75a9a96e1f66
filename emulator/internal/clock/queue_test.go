package clock

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The queue gives the events in exactly the heap's order, whatever order they are
// scheduled in: streams of steps a fixed delay apart (the lanes' case), ties at one
// instant in their places, places handed out of order (two creates racing), events
// before everything pending, and any mix of them, with pops and peeks between.
func TestEventQueueIsTheHeap(t *testing.T) {
	toLanes, toHeap := 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		var q eventQueue
		var h eventHeap
		var seq uint64
		now := int64(0)
		delays := []int64{1000, 6000, 5000, 0, 30, 1 << 40}[:1+r.IntN(6)]
		for op := range 3000 {
			switch x := r.IntN(10); {
			case x < 6: // schedule
				var at int64
				switch r.IntN(4) {
				case 0:
					at = r.Int64N(10000) // anywhere, before or after what is pending
				default:
					at = now + delays[r.IntN(len(delays))] // a step a delay on
				}
				seq += 2
				places := []uint64{seq}
				if r.IntN(8) == 0 { // two places reserved in turn, used the other way round
					places = []uint64{seq, seq - 1}
				}
				for _, s := range places {
					e := event{at: at, seq: s, task: Func(nil), inFlight: r.IntN(2) == 0}
					inHeap := len(q.heap)
					q.push(e)
					h.push(e)
					if len(q.heap) > inHeap {
						toHeap++
					} else {
						toLanes++
					}
				}
			case x < 9: // fire the earliest
				if len(h) == 0 {
					continue
				}
				want, got := h.pop(), q.pop()
				if got.at != want.at || got.seq != want.seq || got.inFlight != want.inFlight {
					t.Fatalf("seed %d op %d: popped %d/%d, the heap %d/%d", seed, op, got.at, got.seq, want.at, want.seq)
				}
				now = max(now, got.at)
			default: // time passes
				now += r.Int64N(50)
			}
			if q.len() != len(h) {
				t.Fatalf("seed %d op %d: len %d, the heap %d", seed, op, q.len(), len(h))
			}
			if len(h) > 0 {
				if p := q.peek(); p.at != h[0].at || p.seq != h[0].seq {
					t.Fatalf("seed %d op %d: peek %d/%d, the heap %d/%d", seed, op, p.at, p.seq, h[0].at, h[0].seq)
				}
			}
			if op%500 == 0 {
				var a, b []uint64
				q.each(func(e *event) { a = append(a, e.seq) })
				for _, e := range h {
					b = append(b, e.seq)
				}
				slices.Sort(a)
				slices.Sort(b)
				if !slices.Equal(a, b) {
					t.Fatalf("seed %d op %d: each gives %d events, the heap holds %d", seed, op, len(a), len(b))
				}
			}
		}
		for len(h) > 0 {
			want, got := h.pop(), q.pop()
			if got.at != want.at || got.seq != want.seq {
				t.Fatalf("seed %d, draining: popped %d/%d, the heap %d/%d", seed, got.at, got.seq, want.at, want.seq)
			}
		}
		if q.len() != 0 {
			t.Fatalf("seed %d: %d left", seed, q.len())
		}
	}
	if toLanes == 0 || toHeap == 0 {
		t.Fatalf("%d events went to lanes, %d to the heap: both paths must be tried", toLanes, toHeap)
	}
	t.Logf("%d events to lanes, %d to the heap", toLanes, toHeap)
}

// A lane fed and drained at the same rate, never empty, keeps its room bounded.
func TestEventQueueLaneBounded(t *testing.T) {
	var q eventQueue
	var seq uint64
	for i := range 100 {
		seq++
		q.push(event{at: int64(i), seq: seq})
	}
	for i := 100; i < 200000; i++ {
		seq++
		q.push(event{at: int64(i), seq: seq})
		q.pop()
	}
	if len(q.heap) != 0 {
		t.Fatalf("%d events in the heap: the stream missed its lane", len(q.heap))
	}
	for i := range q.lanes {
		if c := cap(q.lanes[i].q); c > 4096 {
			t.Fatalf("lane %d holds room for %d events, 100 pending", i, c)
		}
	}
}

// Events far ahead scheduled out of order (renewals loaded with a state) hold every
// lane's end: a stream of steps after them still takes a lane (reclaim), not the heap.
func TestEventQueueLanesReclaimed(t *testing.T) {
	var q eventQueue
	var seq uint64
	for i := range 2 * queueLanes { // each before the last: a lane each, then the heap
		seq++
		q.push(event{at: int64(1e15 - i), seq: seq})
	}
	for i := range 10000 {
		seq++
		q.push(event{at: int64(i) * 1000, seq: seq})
		if q.len() > 100 {
			q.pop()
		}
	}
	if len(q.heap) > 2*queueLanes {
		t.Fatalf("%d of %d events in the heap: the stream found no lane", len(q.heap), q.len())
	}
}

// A lane longer than reclaimMax is not moved to the heap by one early event: that
// event goes to the heap, the lane keeps its stream.
func TestEventQueueReclaimBounded(t *testing.T) {
	var q eventQueue
	var seq uint64
	for i := range queueLanes { // a long lane each, every one after what follows
		for j := range reclaimMax + 1 {
			seq++
			q.push(event{at: int64(1e9*(queueLanes-i)) + int64(j), seq: seq})
		}
	}
	if len(q.heap) != 0 {
		t.Fatalf("%d events in the heap, want each in its lane", len(q.heap))
	}
	seq++
	q.push(event{at: 0, seq: seq})
	if len(q.heap) != 1 {
		t.Fatalf("%d events in the heap, want only the early one", len(q.heap))
	}
	if got := q.pop(); got.seq != seq {
		t.Fatalf("popped %d, want the early event %d", got.seq, seq)
	}
}

// A burst's room is not kept once its events are gone: 100,000 events in order (a
// lane) and 100,000 out of order (the heap), all fired, leave at most keptRoom of room
// in each; the events come out in order all the same.
func TestEventQueueShrinksAfterABurst(t *testing.T) {
	var q eventQueue
	var seq uint64
	const burst = 100_000
	for i := range burst {
		seq++
		q.push(event{at: int64(i), seq: seq})
	}
	for i := range burst { // far ahead, each before the last: the heap
		seq++
		q.push(event{at: int64(1e12 - i), seq: seq})
	}
	if len(q.heap) < burst/2 {
		t.Fatalf("%d events in the heap, want the out-of-order half there", len(q.heap))
	}
	last := int64(-1)
	for q.len() > 10 {
		e := q.pop()
		if e.at < last {
			t.Fatalf("%d after %d", e.at, last)
		}
		last = e.at
	}
	if c := cap(q.heap); c > keptRoom {
		t.Errorf("the heap keeps room for %d events, 10 pending", c)
	}
	for i := range q.lanes {
		if c := cap(q.lanes[i].q); c > keptRoom {
			t.Errorf("lane %d keeps room for %d events", i, c)
		}
	}
	for q.len() > 0 {
		q.pop()
	}
	for i := range q.lanes {
		if c := cap(q.lanes[i].q); c > keptRoom {
			t.Errorf("emptied lane %d keeps room for %d events", i, c)
		}
	}
}
