package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		live, headroom uint64
		base, want     int
	}{
		{2 << 20, 32 << 20, 100, 1600}, // a small live heap: room to grow 32 MiB
		{64 << 20, 32 << 20, 100, 100}, // a large one: GOGC as it was
		{1 << 10, 32 << 20, 100, 5000}, // nearly empty: capped
		{0, 32 << 20, 100, 5000},       // before any collection
		{16 << 20, 32 << 20, 400, 400}, // a GOGC set by the program is the floor
		{16 << 20, 32 << 20, 100, 200}, // exactly the headroom
		{100 << 20, 32 << 20, 50, 50},  // a low GOGC stays low on a large heap
	} {
		if got := Percent(tt.live, tt.headroom, tt.base); got != tt.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", tt.live, tt.headroom, tt.base, got, tt.want)
		}
	}
}

// After a collection the tuner has raised GOGC for this test's small heap, and stop
// puts it back.
func TestStartTunesAfterACollectionAndStopRestores(t *testing.T) {
	t.Setenv("GOGC", "") // one in the environment turns the tuner off (TestUsersGOGCIsKept)
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	stop := Start(DefaultHeadroom)
	if again := Start(DefaultHeadroom); again == nil {
		t.Fatal("a second Start returned no stop")
	}
	for range 3 { // the finalizer runs after the collection that found its sentinel
		runtime.GC()
	}
	waitFor(t, func() bool { return gogc() > 100 })
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", p)
	}
}

// gogc reads GOGC without setting it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitFor runs collections until cond holds: finalizers run on their own goroutine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 100 {
		if cond() {
			return
		}
		runtime.GC()
		runtime.Gosched()
	}
	t.Fatal("the tuner did not raise GOGC after 100 collections")
}

// Room gives the heap its room at once, before any collection, however small the live
// heap (past Start's cap of 5000 %), keeps it after collections, and stop puts GOGC
// back; while it runs, Start does nothing.
func TestRoomGivesItsRoomAtOnce(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	runtime.GC()
	const room = 1 << 30
	stop := Room(room)
	// the live heap of this test is a few MiB, under the heap's minimum: the room
	// is figured from that minimum
	if got, want := gogc(), uint64(room*100/heapMinimum); got != want {
		t.Fatalf("GOGC under Room = %d, want %d", got, want)
	}
	Start(DefaultHeadroom)() // one tuner at a time: this one does nothing
	if gogc() < maxPercent {
		t.Fatalf("Start while Room runs changed GOGC to %d", gogc())
	}
	runtime.GC() // the tuner keeps the room after a collection
	runtime.GC()
	waitFor(t, func() bool { return gogc() > maxPercent })
	stop()
	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", p)
	}
	// GOGC=off: Room leaves it off
	debug.SetGCPercent(-1)
	Room(room)()
	if p := debug.SetGCPercent(100); p != -1 {
		t.Fatalf("GOGC=off became %d", p)
	}
}

func TestRoomPercent(t *testing.T) {
	for _, tt := range []struct {
		live, headroom uint64
		base, want     int
	}{
		{heapMinimum, 288 << 20, 100, 7200},  // the first collection waits for the room
		{100 << 20, 288 << 20, 100, 288},     // a live heap of 100 MiB grows by 288 more
		{1 << 30, 288 << 20, 100, 100},       // a larger one: GOGC as it was
		{1, 1 << 30, 100, roomMaxPercent},    // capped
		{heapMinimum, 288 << 20, 9000, 9000}, // a GOGC set by the program is the floor
	} {
		if got := percent(tt.live, tt.headroom, tt.base, roomMaxPercent); got != tt.want {
			t.Errorf("percent(%d, %d, %d) = %d, want %d", tt.live, tt.headroom, tt.base, got, tt.want)
		}
	}
}

// A GOGC the user set in the environment is kept as it is: neither the serving tuner
// nor a replay's room raises it, however small the heap (a user who sets GOGC=50 to
// keep memory down gets 50, as from any Go program).
func TestUsersGOGCIsKept(t *testing.T) {
	for _, v := range []string{"50", "off"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv("GOGC", v)
			want := 50
			if v == "off" {
				want = -1
			}
			before := debug.SetGCPercent(want) // what the runtime read from the environment
			defer debug.SetGCPercent(before)
			stop := Start(DefaultHeadroom)
			defer stop() // a second call does nothing
			for range 5 {
				runtime.GC()
				runtime.Gosched()
			}
			if p := debug.SetGCPercent(want); p != want {
				t.Fatalf("GOGC=%s under Start became %d", v, p)
			}
			stop()
			stopRoom := Room(1 << 30)
			defer stopRoom()
			runtime.GC()
			if p := debug.SetGCPercent(want); p != want {
				t.Fatalf("GOGC=%s under Room became %d", v, p)
			}
			stopRoom()
			if p := debug.SetGCPercent(want); p != want {
				t.Fatalf("GOGC=%s after stop became %d", v, p)
			}
			if running.Load() {
				t.Fatal("a tuner is marked running though none started")
			}
		})
	}
}
