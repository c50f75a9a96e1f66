package perf_test

import (
	"os"
	"os/exec"
	"strings"
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
	if os.Getenv("HOSTEMU_PERF") == "" {
		t.Skip("set HOSTEMU_PERF=1 to profile the serving path under wrk")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed")
	}
	s, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	base := s.URL()
	path := "/v1/deployments/" + firstDeployment(t, base)
	args := []string{"-t1", "-c16", "-d6s", "-H", "Authorization: Bearer hostemu-read", base + path}
	if ts, err := exec.LookPath("taskset"); err == nil {
		args = append([]string{"-c", "1", wrk}, args...)
		wrk = ts
	}
	out, err := exec.Command(wrk, args...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "Non-2xx") {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
