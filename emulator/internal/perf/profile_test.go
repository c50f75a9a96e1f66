package perf_test

import (
	"crypto/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

// TestProfileServe serves the default world the way the binary does (emulator.Listen,
// the binary's defaults: real clock, rate limits counted, journal on) while wrk loads
// GET /v1/deployments/{id}, so that a CPU profile shows where a request's time goes:
//
//	HOSTEMU_PERF=1 go test -run TestProfileServe -cpuprofile cpu.out ./emulator/internal/perf/
//	go tool pprof -top -nodecount 60 perf.test cpu.out
//
// With HOSTEMU_PERF_PROFILE=create, loadgen sends creates (POST /v1/deployments, as
// TestBinaryHotPaths does) instead, and the profile goes on 7 s after the load, while
// the lifecycles those creates started run out; with HOSTEMU_PERF_PROFILE=files,
// uploads of one 1 KiB file (POST /v1/files, the same bytes each time, as
// TestBinaryHotPaths sends).
// HOSTEMU_PERF_SIDE=bare profiles the reference (package bare) under the same load.
func TestProfileServe(t *testing.T) {
	wrk, taskset := tools(t, "profile the serving path under wrk")
	base, path := serveForProfile(t)
	if os.Getenv("HOSTEMU_PERF_PROFILE") == "files" {
		b := make([]byte, 1<<10)
		rand.Read(b)
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", loadReq(t, wrk, taskset, base+"/v1/files", "6s", 0, "POST", f, "", "Authorization: Bearer hostemu-deploy", "Content-Type: application/octet-stream", "X-File-Digest: "+sum(b)))
		return
	}
	if os.Getenv("HOSTEMU_PERF_PROFILE") == "create" {
		site := []byte("<!doctype html><h1>Hello</h1>")
		do(t, "POST", base+"/v1/files", "", "Bearer hostemu-deploy", site, 201, "X-File-Digest", sum(site), "Content-Type", "application/octet-stream")
		create := filepath.Join(t.TempDir(), "create.json")
		if err := os.WriteFile(create, []byte(`{"project_id":"prj_demo","files":{"index.html":"`+sum(site)+`"},"target":"preview","env":{"FEATURE":"on"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", loadReq(t, wrk, taskset, base+"/v1/deployments", "6s", 0, "POST", create, "", "Authorization: Bearer hostemu-deploy", "Content-Type: application/json"))
		// the lifecycles the creates started run for 6 s more (queued 1 s, building
		// 5 s): their transitions are the creates' work, and belong in the profile
		time.Sleep(7 * time.Second)
		return
	}
	t.Logf("%s", load(t, wrk, taskset, base+path, "6s"))
}

// serveForProfile serves the default world as the binary does and returns its URL and
// the path of its first deployment; with HOSTEMU_PERF_SIDE=bare, the URL of the
// reference of package bare instead (its GET answers that deployment's bytes), for a
// profile of the other side under the same load.
func serveForProfile(t *testing.T) (base, path string) {
	t.Helper()
	s, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0", RateLimitsOff: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	path = "/v1/deployments/" + firstDeployment(t, s.URL())
	if os.Getenv("HOSTEMU_PERF_SIDE") != "bare" {
		return s.URL(), path
	}
	body := get(t, s.URL()+path)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: bare.New(body)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), path
}
