// Package notify is how hostemu's waiters learn that something changed: the journal's
// awaits, the body-byte budget, the connection cap's waiting accepts, --state's
// durability waits and the world's awaits all use a Signal.
package notify

import "sync"

// Signal wakes every waiter at the next change. A waiter takes the channel first,
// then checks its condition, then waits on the channel, so no change between the check
// and the wait is missed:
//
//	for {
//		ch := s.Next()
//		if cond() {
//			return
//		}
//		select {
//		case <-ch:
//		case <-ctx.Done():
//			return
//		}
//	}
//
// The zero value is ready to use. A change costs an uncontended lock while nobody waits.
type Signal struct {
	mu sync.Mutex    // guards ch
	ch chan struct{} // closed at the next Notify; nil while nobody waits
}

// Next returns a channel closed at the next Notify.
func (s *Signal) Next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Notify wakes every waiter.
func (s *Signal) Notify() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}
