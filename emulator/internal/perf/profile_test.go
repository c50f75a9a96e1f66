package perf_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// TestProfileServe serves the default world the way the binary does (emulator.Listen,
// the binary's defaults: real clock, rate limits counted, journal on) while wrk loads
// GET /v1/deployments/{id}, so that a CPU profile shows where a request's time goes:
//
//	HOSTEMU_PERF=1 go test -run TestProfileServe -cpuprofile cpu.out ./emulator/internal/perf/
//	go tool pprof -top -nodecount 60 perf.test cpu.out
func TestProfileServe(t *testing.T) {
	wrk, taskset := tools(t, "profile the serving path under wrk")
	s, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	t.Logf("%s", load(t, wrk, taskset, s.URL()+"/v1/deployments/"+firstDeployment(t, s.URL()), "6s"))
}
