package testkit_test

import (
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// TestClockModesForAppsWithoutAHook: with ClockScaled and ClockAuto, a deployment gets
// ready with nobody calling Advance, in Start's world and in a namespace of Connect;
// the WaitFor methods still work on both.
func TestClockModesForAppsWithoutAHook(t *testing.T) {
	t.Parallel()
	for _, mode := range []testkit.ClockMode{testkit.ClockScaled(1000), testkit.ClockAuto} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			emu := testkit.Start(t, testkit.WithoutTLS(), testkit.WithClock(mode))
			ns := testkit.Connect(t, emu.URL(), testkit.WithClock(mode))
			for _, e := range []*testkit.Emulator{emu, ns} {
				h := e.Hosting()
				d := h.CreateDeployment(testkit.NewDeployment{ProjectID: "prj_demo"})
				began := time.Now()
				for h.Deployment(d.ID).Status != "ready" { // an app polling, no hook
					if time.Since(began) > 30*time.Second {
						t.Fatalf("%s: not ready after 30 s of polling", mode)
					}
					// longer than the auto clock's idle time (20 ms): an app that polls faster
					// than that keeps the world busy, and the clock waits for it
					time.Sleep(50 * time.Millisecond)
				}
				d2 := h.CreateDeployment(testkit.NewDeployment{ProjectID: "prj_demo"})
				e.WaitForDeployment(d2.ID, "ready")
			}
		})
	}
}
