package perf_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// TestProfileServe serves the default world the way the binary does (emulator.Listen,
// the binary's defaults: real clock, rate limits counted, journal on) while wrk loads
// GET /v1/deployments/{id}, so that a CPU profile shows where a request's time goes:
//
//	HOSTEMU_PERF=1 go test -run TestProfileServe -cpuprofile cpu.out ./emulator/internal/perf/
//	go tool pprof -top -nodecount 60 perf.test cpu.out
//
// With HOSTEMU_PERF_PROFILE=create, loadgen sends creates (POST /v1/deployments, as
// TestBinaryHotPaths does) instead.
func TestProfileServe(t *testing.T) {
	wrk, taskset := tools(t, "profile the serving path under wrk")
	s, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	if os.Getenv("HOSTEMU_PERF_PROFILE") == "create" {
		site := []byte("<!doctype html><h1>Hello</h1>")
		do(t, "POST", s.URL()+"/v1/files", "", "Bearer hostemu-deploy", site, 201, "X-File-Digest", sum(site), "Content-Type", "application/octet-stream")
		create := filepath.Join(t.TempDir(), "create.json")
		if err := os.WriteFile(create, []byte(`{"project_id":"prj_demo","files":{"index.html":"`+sum(site)+`"},"target":"preview","env":{"FEATURE":"on"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", loadReq(t, wrk, taskset, s.URL()+"/v1/deployments", "6s", "POST", create, "", "Authorization: Bearer hostemu-deploy", "Content-Type: application/json"))
		return
	}
	t.Logf("%s", load(t, wrk, taskset, s.URL()+"/v1/deployments/"+firstDeployment(t, s.URL()), "6s"))
}
