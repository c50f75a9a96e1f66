package notify

import (
	"sync"
	"sync/atomic"
	"testing"
)

// A waiter that took the channel before a change is woken by it; one that takes it
// after waits for the next.
func TestSignalWakesEveryWaiterOnce(t *testing.T) {
	var s Signal
	before := s.Next()
	s.Notify()
	select {
	case <-before:
	default:
		t.Fatal("a waiter from before the change was not woken")
	}
	after := s.Next()
	select {
	case <-after:
		t.Fatal("a waiter from after the change was woken by it")
	default:
	}
	s.Notify()
	<-after
}

// No change is lost between a waiter's check and its wait, under -race.
func TestSignalLosesNoChange(t *testing.T) {
	var s Signal
	var n atomic.Int64
	const target = 1000
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ch := s.Next()
				if n.Load() >= target {
					return
				}
				<-ch
			}
		}()
	}
	for range target {
		n.Add(1)
		s.Notify()
	}
	wg.Wait()
}
