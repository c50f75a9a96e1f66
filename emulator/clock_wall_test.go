package emulator_test

import (
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// A real clock with no --clock-start is wall time: a deployment is never created
// before the request that created it, and a reset does not rewind the clock.
func TestRealClockIsWallTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.ClockMode, o.ClockStart = clock.Real, time.Time{} })
	// what hostemu writes has millisecond precision, so compare at that precision
	before := time.Now().UTC().Truncate(time.Millisecond)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r, 201)
	created, err := time.Parse(time.RFC3339Nano, r.JSON(t)["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if created.Before(before) {
		t.Fatalf("created_at %v is before the request was sent (%v)", created, before)
	}

	before = time.Now().UTC().Truncate(time.Millisecond)
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	now, err := time.Parse(time.RFC3339Nano, e.get("/_emulator/clock", "").JSON(t)["now"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if now.Before(before) {
		t.Fatalf("after a reset the real clock shows %v, behind the wall (%v)", now, before)
	}
}
