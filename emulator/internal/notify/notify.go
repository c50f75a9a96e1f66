// Package notify is how hostemu's waiters learn that something changed: the journal's
// awaits, the body-byte budget, the connection cap's waiting accepts, --state's
// durability waits and the world's awaits all use a Signal.
package notify

import "sync/atomic"

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
// The zero value is ready to use. Notify costs one atomic load while nobody waits.
type Signal struct {
	ch atomic.Pointer[chan struct{}] // closed at the next Notify; nil while nobody waits
}

// Next returns a channel closed at the next Notify.
func (s *Signal) Next() <-chan struct{} {
	for {
		if p := s.ch.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if s.ch.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// Notify wakes every waiter. A waiter that took its channel after Notify looked finds
// the change when it checks its condition: the change happened before the look.
func (s *Signal) Notify() {
	if s.ch.Load() == nil {
		return
	}
	if p := s.ch.Swap(nil); p != nil {
		close(*p)
	}
}
