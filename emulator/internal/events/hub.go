// Package events fans the emulator's changes out to live subscribers (the
// server-sent-event stream GET /_emulator/events, and through it the dashboard).
//
// The emitter never waits for a subscriber: each has a bounded buffer, and one that
// falls a whole buffer behind is dropped, its stream ended with the reason, rather than
// slowing the request that emitted. A subscriber names the types it wants, and the hub
// filters before it queues: an event costs nothing for the subscribers that do not want
// its type (they are not even visited), and with nobody wanting a type, Listening for it
// is two atomic loads, so the hot path (every request is journaled) pays nothing else.
package events

import (
	"encoding/json"
	"maps"
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
	// subs counts the subscribers, and wanted holds how many want each type (its key ""
	// counts those that want every type), both so that Listening takes no lock; wanted
	// is replaced whole under mu.
	subs   atomic.Int64
	wanted atomic.Pointer[map[string]int]
	buffer int

	// keep are the types whose events the hub remembers (the last keepN of them, in
	// hist), whether anyone listens or not: a failure bundle's recent changes. Set by
	// NewHubKeeping and never changed.
	keep  map[string]bool
	keepN int

	histMu   sync.Mutex // guards hist, histHead and histSeq
	hist     []Recorded
	histHead int
	histSeq  uint64

	mu     sync.Mutex // guards seq, all, byType and closed
	seq    uint64
	all    map[*Subscription]struct{}            // subscribers of every type
	byType map[string]map[*Subscription]struct{} // subscribers of some types, by type
	closed bool
}

// NewHub returns a hub whose subscribers may fall buffer events behind (DefaultBuffer
// when buffer is 0 or less).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	h := &Hub{buffer: buffer, all: map[*Subscription]struct{}{}, byType: map[string]map[*Subscription]struct{}{}}
	h.wanted.Store(&map[string]int{})
	return h
}

// Recorded is an event the hub remembers: its number among the remembered ones, its
// type and its data, encoded only when read.
type Recorded struct {
	Seq  uint64 `json:"seq"`
	Type string `json:"type"`
	Data any    `json:"data"`
}

// NewHubKeeping is NewHub remembering the last n events of the given types (History),
// whether anyone listens or not.
func NewHubKeeping(buffer, n int, types ...string) *Hub {
	h := NewHub(buffer)
	h.keep, h.keepN = map[string]bool{}, n
	for _, t := range types {
		h.keep[t] = true
	}
	return h
}

// History is the remembered events, oldest first.
func (h *Hub) History() []Recorded {
	h.histMu.Lock()
	defer h.histMu.Unlock()
	out := make([]Recorded, 0, len(h.hist))
	out = append(out, h.hist[h.histHead:]...)
	return append(out, h.hist[:h.histHead]...)
}

// LoadHistory replaces the remembered events with rs (oldest first; the newest n kept),
// numbering goes on from the last one's.
func (h *Hub) LoadHistory(rs []Recorded) {
	if len(rs) > h.keepN {
		rs = rs[len(rs)-h.keepN:]
	}
	h.histMu.Lock()
	defer h.histMu.Unlock()
	h.hist, h.histHead, h.histSeq = append([]Recorded(nil), rs...), 0, 0
	if len(rs) > 0 {
		h.histSeq = rs[len(rs)-1].Seq
	}
}

func (h *Hub) remember(typ string, data any) {
	h.histMu.Lock()
	defer h.histMu.Unlock()
	h.histSeq++
	r := Recorded{Seq: h.histSeq, Type: typ, Data: data}
	if len(h.hist) < h.keepN {
		h.hist = append(h.hist, r)
		return
	}
	h.hist[h.histHead] = r
	h.histHead = (h.histHead + 1) % h.keepN
}

// Listening reports whether anyone is subscribed to anything.
func (h *Hub) Listening() bool { return h != nil && h.subs.Load() > 0 }

// Wants reports whether a subscriber wants events of type typ: callers check it before
// building an event's data, so that emitting costs nothing while nobody wants it.
func (h *Hub) Wants(typ string) bool {
	if h != nil && h.keep[typ] {
		return true
	}
	return h.subscribed(typ)
}

// subscribed reports whether a subscriber wants typ.
func (h *Hub) subscribed(typ string) bool {
	if !h.Listening() {
		return false
	}
	w := *h.wanted.Load()
	return w[""] > 0 || w[typ] > 0
}

// Emit encodes data as JSON and hands the event to every subscriber that wants its
// type, without waiting: a subscriber whose buffer is full is dropped with ReasonSlow.
func (h *Hub) Emit(typ string, data any) {
	if h.keep[typ] {
		h.remember(typ, data)
	}
	if !h.subscribed(typ) {
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
	for _, set := range [2]map[*Subscription]struct{}{h.all, h.byType[typ]} {
		for s := range set {
			select {
			case s.ch <- ev:
			default:
				h.endLocked(s, ReasonSlow)
			}
		}
	}
}

// Subscribe starts a subscription to events of the given types (every type when none is
// given); end it with Unsubscribe. On a closed hub it is already ended with
// ReasonClosed.
func (h *Hub) Subscribe(types ...string) *Subscription {
	s := &Subscription{ch: make(chan Event, h.buffer), types: types}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.reason = ReasonClosed
		close(s.ch)
		return s
	}
	if len(types) == 0 {
		h.all[s] = struct{}{}
	}
	for _, t := range types {
		if h.byType[t] == nil {
			h.byType[t] = map[*Subscription]struct{}{}
		}
		h.byType[t][s] = struct{}{}
	}
	h.subs.Add(1)
	h.countLocked(s, 1)
	return s
}

// countLocked adds n to the counts of the types s wants, in a new wanted map.
func (h *Hub) countLocked(s *Subscription, n int) {
	w := maps.Clone(*h.wanted.Load())
	if len(s.types) == 0 {
		w[""] += n
	}
	for _, t := range s.types {
		w[t] += n
	}
	h.wanted.Store(&w)
}

// subscribedLocked reports whether s is still subscribed.
func (h *Hub) subscribedLocked(s *Subscription) bool {
	if _, ok := h.all[s]; ok {
		return true
	}
	for _, t := range s.types {
		if _, ok := h.byType[t][s]; ok {
			return true
		}
	}
	return false
}

// Unsubscribe ends s; its channel is closed. It may be called more than once.
func (h *Hub) Unsubscribe(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subscribedLocked(s) {
		h.endLocked(s, "")
	}
}

// Close ends every subscription with ReasonClosed, and every later one at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.all {
		h.endLocked(s, ReasonClosed)
	}
	for _, set := range h.byType {
		for s := range set {
			h.endLocked(s, ReasonClosed)
		}
	}
}

// Seq is the number of the last event emitted.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

func (h *Hub) endLocked(s *Subscription, reason string) {
	if !h.subscribedLocked(s) {
		return // ended already (a subscriber of several types met twice)
	}
	delete(h.all, s)
	for _, t := range s.types {
		delete(h.byType[t], s)
		if len(h.byType[t]) == 0 {
			delete(h.byType, t)
		}
	}
	h.subs.Add(-1)
	h.countLocked(s, -1)
	s.mu.Lock()
	s.reason = reason
	s.mu.Unlock()
	close(s.ch)
}

// Subscription is one subscriber's stream of events.
type Subscription struct {
	ch    chan Event
	types []string // the types it wants; none: every type

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
