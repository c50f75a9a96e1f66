package events_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/events"
)

func TestOrderedAndComplete(t *testing.T) {
	h := events.NewHub(1000)
	a, b := h.Subscribe(), h.Subscribe()
	for i := range 500 {
		h.Emit("n", i)
	}
	h.Close()
	for _, s := range []*events.Subscription{a, b} {
		var got []int
		var seq uint64
		for ev := range s.C() {
			var n int
			if err := json.Unmarshal(ev.Data, &n); err != nil {
				t.Fatal(err)
			}
			if ev.Seq != seq+1 {
				t.Fatalf("seq %d after %d", ev.Seq, seq)
			}
			seq = ev.Seq
			got = append(got, n)
		}
		if len(got) != 500 {
			t.Fatalf("got %d events, want 500", len(got))
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("event %d is %d", i, n)
			}
		}
		if s.Reason() != events.ReasonClosed {
			t.Errorf("reason %q", s.Reason())
		}
	}
}

// A subscriber that never reads must not hold the emitters up: it is dropped once its
// buffer is full, and the others get every event.
func TestStuckSubscriberIsDropped(t *testing.T) {
	h := events.NewHub(8)
	stuck := h.Subscribe()
	live := h.Subscribe()
	var got []events.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range live.C() {
			got = append(got, ev)
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Emit("n", fmt.Sprint(w, i))
			}
		}()
	}
	wg.Wait() // returns: nobody waited for the stuck subscriber
	n := 0
	for range stuck.C() {
		n++
	}
	if n != 8 {
		t.Errorf("the stuck subscriber holds %d events, want its buffer (8)", n)
	}
	if stuck.Reason() != events.ReasonSlow {
		t.Errorf("stuck reason %q", stuck.Reason())
	}
	h.Close()
	<-done
	// live may have been dropped too if it fell behind; what it got is in order
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatalf("gap: %d then %d", got[i-1].Seq, got[i].Seq)
		}
	}
}

func TestUnsubscribeAndListening(t *testing.T) {
	h := events.NewHub(0)
	if h.Listening() {
		t.Fatal("listening with no subscriber")
	}
	s := h.Subscribe()
	if !h.Listening() {
		t.Fatal("not listening with a subscriber")
	}
	h.Unsubscribe(s)
	h.Unsubscribe(s)
	if h.Listening() {
		t.Fatal("listening after unsubscribe")
	}
	if _, ok := <-s.C(); ok || s.Reason() != "" {
		t.Fatalf("unsubscribed stream still open or has reason %q", s.Reason())
	}
	h.Emit("x", 1) // nobody: nothing happens
	if h.Seq() != 0 {
		t.Errorf("seq %d with nobody listening", h.Seq())
	}
	h.Close()
	if late := h.Subscribe(); late.Reason() != events.ReasonClosed {
		t.Errorf("late subscription reason %q", late.Reason())
	}
}

func BenchmarkEmitNobody(b *testing.B) {
	h := events.NewHub(0)
	for b.Loop() {
		if h.Listening() {
			h.Emit("request", b.N)
		}
	}
}

// A subscriber filtered to some types is never visited for others: it is not handed the
// event, so it is never dropped for not reading it, and while only such subscribers are
// there, Wants is false for the other types (the world builds no data for them).
func TestFilteredSubscribersCostNothing(t *testing.T) {
	h := events.NewHub(4)
	scen := make([]*events.Subscription, 2000)
	for i := range scen {
		scen[i] = h.Subscribe("scenario")
	}
	if h.Wants("request") || !h.Wants("scenario") || !h.Listening() {
		t.Fatalf("Wants(request) %v, Wants(scenario) %v", h.Wants("request"), h.Wants("scenario"))
	}
	for i := range 10000 {
		h.Emit("request", i)
	}
	for i, s := range scen {
		if len(s.C()) != 0 {
			t.Fatalf("subscriber %d was handed %d request events", i, len(s.C()))
		}
	}
	h.Emit("scenario", "switched")
	if ev := <-scen[0].C(); ev.Type != "scenario" {
		t.Fatalf("got %+v", ev)
	}
	all := h.Subscribe()
	if !h.Wants("request") {
		t.Fatal("a subscriber of every type does not make request wanted")
	}
	h.Unsubscribe(all)
	for _, s := range scen {
		h.Unsubscribe(s)
	}
	if h.Listening() || h.Wants("scenario") {
		t.Fatal("still listening with every subscriber gone")
	}
}

// BenchmarkEmitFiltered: emitting a type nobody wants costs the same with 2,000
// subscribers of other types as with none.
func BenchmarkEmitFiltered(b *testing.B) {
	for _, n := range []int{0, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := events.NewHub(4)
			for range n {
				h.Subscribe("scenario")
			}
			for b.Loop() {
				if h.Wants("request") {
					h.Emit("request", 1)
				}
			}
		})
	}
}
