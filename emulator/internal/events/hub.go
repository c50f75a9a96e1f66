// Package events fans the emulator's changes out to live subscribers (the
// server-sent-event stream GET /_emulator/events, and through it the dashboard).
//
// The emitter never waits for a subscriber: each has a bounded buffer, and one that
// falls a whole buffer behind is dropped, its stream ended with the reason, rather than
// slowing the request that emitted. With nobody subscribed, Listening is one atomic load,
// so the hot path (every request is journaled) pays nothing else.
package events

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many events a subscriber may fall behind before it is dropped.
const DefaultBuffer = 256

// Event is one change, its data already encoded once for every subscriber.
type Event struct {
	// Seq numbers the hub's events from 1, in the order subscribers receive them.
	Seq  uint64
	Type string
	Data json.RawMessage
}

// Reasons a subscription ends.
const (
	ReasonSlow   = "slow: the subscriber fell a whole buffer of events behind; reconnect and read the state again"
	ReasonClosed = "closed: the emulator is shutting down"
)

// Hub delivers events to subscribers, in one order for all. It is safe for concurrent
// use; the zero value is not: use NewHub.
type Hub struct {
	// subs mirrors len(subscribers) so that Listening takes no lock.
	subs   atomic.Int64
	buffer int

	mu          sync.Mutex // guards seq, subscribers and closed
	seq         uint64
	subscribers map[*Subscription]struct{}
	closed      bool
}

// NewHub returns a hub whose subscribers may fall buffer events behind (DefaultBuffer
// when buffer is 0 or less).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Hub{buffer: buffer, subscribers: map[*Subscription]struct{}{}}
}

// Listening reports whether anyone is subscribed: callers check it before building an
// event's data, so that emitting costs nothing while nobody listens.
func (h *Hub) Listening() bool { return h != nil && h.subs.Load() > 0 }

// Emit encodes data as JSON and hands the event to every subscriber without waiting:
// a subscriber whose buffer is full is dropped with ReasonSlow.
func (h *Hub) Emit(typ string, data any) {
	if !h.Listening() {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	ev := Event{Seq: h.seq, Type: typ, Data: b}
	for s := range h.subscribers {
		select {
		case s.ch <- ev:
		default:
			h.endLocked(s, ReasonSlow)
		}
	}
}

// Subscribe starts a subscription; end it with Unsubscribe. On a closed hub it is
// already ended with ReasonClosed.
func (h *Hub) Subscribe() *Subscription {
	s := &Subscription{ch: make(chan Event, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.reason = ReasonClosed
		close(s.ch)
		return s
	}
	h.subscribers[s] = struct{}{}
	h.subs.Add(1)
	return s
}

// Unsubscribe ends s; its channel is closed. It may be called more than once.
func (h *Hub) Unsubscribe(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subscribers[s]; ok {
		h.endLocked(s, "")
	}
}

// Close ends every subscription with ReasonClosed, and every later one at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subscribers {
		h.endLocked(s, ReasonClosed)
	}
}

// Seq is the number of the last event emitted.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

func (h *Hub) endLocked(s *Subscription, reason string) {
	delete(h.subscribers, s)
	h.subs.Add(-1)
	s.mu.Lock()
	s.reason = reason
	s.mu.Unlock()
	close(s.ch)
}

// Subscription is one subscriber's stream of events.
type Subscription struct {
	ch chan Event

	mu     sync.Mutex // guards reason
	reason string
}

// C delivers the events in order; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Event { return s.ch }

// Reason says why the hub ended the subscription once C is closed: ReasonSlow or
// ReasonClosed, or "" when the subscriber unsubscribed.
func (s *Subscription) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}
