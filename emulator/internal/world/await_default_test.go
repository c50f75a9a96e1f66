package world

import (
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// An await that names no timeout: a wait for requests is 10 s of wall time on every
// clock (it was an hour on a manual clock, and rate × 10 s of wall time on a scaled
// one); the others an hour of emulated time where the await moves the clock, 10 s of
// wall time elsewhere.
func TestDefaultAwait(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		journaled bool
		want      time.Duration
	}{
		{"manual", true, 10 * time.Second},
		{"auto", true, 10 * time.Second},
		{"scaled:100", true, 10 * time.Second},
		{"real", true, 10 * time.Second},
		{"manual", false, time.Hour},
		{"auto", false, time.Hour},
		{"real", false, 10 * time.Second},
		{"scaled:100", false, 1000 * time.Second},
	} {
		m, err := clock.ParseMode(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := defaultAwait(m, tc.journaled); got != tc.want {
			t.Errorf("%s, journaled %v: %s, want %s", tc.mode, tc.journaled, got, tc.want)
		}
	}
}
