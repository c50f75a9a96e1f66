package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// bundleFile is a failure bundle of a world with a deployment building and a fault
// that fired, written to a file; it returns the file and the world's state export.
func bundleFile(t *testing.T) (file string, stateJSON []byte, srvURL string) {
	t.Helper()
	e, err := emulator.New(emulator.Options{ClockMode: emulator.ClockManual, ClockStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	call := func(method, path, token, body string) []byte {
		t.Helper()
		_, b := httpCall(t, srv.URL, method, path, token, body)
		return b
	}
	call("POST", "/_emulator/faults", "", `{"match":{"path":"/v1/projects"},"status":503,"times":1}`)
	call("GET", "/v1/projects", "hostemu-read", "")
	call("POST", "/v1/deployments", "hostemu-deploy", `{"project_id":"prj_demo","files":{}}`)
	call("POST", "/_emulator/clock/advance", "", `{"by":"2s"}`)
	tgz := call("POST", "/_emulator/bundle", "", `{"failure":"checkout_test.go:41: GET /v1/projects: 503\nwant 200"}`)
	file = filepath.Join(t.TempDir(), "TestCheckout.hostemu.tgz")
	if err := os.WriteFile(file, tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, call("GET", "/_emulator/state", "", ""), srv.URL
}

func TestReplayServesTheBundlesWorld(t *testing.T) {
	t.Parallel()
	file, stateJSON, orig := bundleFile(t)
	s := startCmd(t, nil, "replay", file, "--addr", "127.0.0.1:0")
	get := func(base, path string) []byte {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return b
	}
	if got := get(s.url, "/_emulator/state"); !bytes.Equal(got, stateJSON) {
		t.Fatalf("the replayed state differs:\n%.300s\n%.300s", got, stateJSON)
	}
	if got, want := get(s.url, "/_emulator/clock"), get(orig, "/_emulator/clock"); !bytes.Equal(got, want) {
		t.Errorf("clock %s, want %s", got, want)
	}
	if got := string(get(s.url, "/_emulator/requests")); !strings.Contains(got, `"replayed":true`) || !strings.Contains(got, `"fault_id":"flt_1"`) {
		t.Errorf("journal: %s", got)
	}
	if !strings.Contains(s.stdout.String(), "replaying "+file+": the default world at 2026-01-01T00:00:02Z, scenario default") {
		t.Errorf("stdout: %s", s.stdout)
	}
	// #33: why the test failed, and the world's coverage rather than 0 %
	if !strings.Contains(s.stdout.String(), "replaying "+file+": the test failed with:\n    checkout_test.go:41: GET /v1/projects: 503\n    want 200\n") {
		t.Errorf("stdout does not say the failure: %s", s.stdout)
	}
	if got, want := get(s.url, "/_emulator/coverage"), get(orig, "/_emulator/coverage"); !bytes.Equal(got, want) || !strings.Contains(string(got), `"status":503,"code":"service_unavailable","seen":1`) {
		t.Errorf("coverage %s, want %s", got, want)
	}
	// what happens next: the build finishes on the replayed clock as in the original
	for _, base := range []string{s.url, orig} {
		req, _ := http.NewRequest("POST", base+"/_emulator/clock/advance", strings.NewReader(`{"by":"10s"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if a, b := get(s.url, "/_emulator/state"), get(orig, "/_emulator/state"); !bytes.Equal(a, b) {
		t.Fatal("after the same advance the replayed world differs from the original")
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr)
	}
}

func TestReplayRefusals(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.hostemu.tgz")
	os.WriteFile(bad, []byte("not a bundle"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "the bundle FILE comes first"},
		{[]string{"--addr", "127.0.0.1:0"}, 2, "the bundle FILE comes first"},
		{[]string{filepath.Join(t.TempDir(), "nope.tgz")}, 2, "no such file"},
		{[]string{bad}, 2, "not gzip"},
		{[]string{"--help"}, 0, ""},
	} {
		code, stdout, stderr := runCmd(t, nil, append([]string{"replay"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("replay %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
		if tc.code == 0 && !strings.Contains(stdout, "Usage: hostemu replay FILE") {
			t.Errorf("replay --help: %s", stdout)
		}
	}
}

// The flags after FILE bound the reading of it: a state over --max-state-bytes is
// refused before anything is served.
func TestReplayReadsWithinTheFlagsBounds(t *testing.T) {
	t.Parallel()
	file, _, _ := bundleFile(t)
	// were the bound ignored, the world would be served: the deadline ends it, and the
	// exit code and message below fail the test
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errOut := newLockedBuffer(), newLockedBuffer()
	code := Run(ctx, []string{"replay", file, "--addr", "127.0.0.1:0", "--tls-addr", "", "--max-state-bytes", "100"}, env(nil), environ(nil), out, errOut)
	if want := "over the bound of 100 (--max-state-bytes)"; code != 2 || !strings.Contains(errOut.String(), want) {
		t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
}

// A bundle taken where the edge had another port (a test's free port): the replay's
// HTTPS listens on that port, so that the deployment URLs open as given; when the port
// is taken here, it says so and serves on another.
func TestReplayServesTheEdgeWhereTheURLsSay(t *testing.T) {
	t.Parallel()
	free := func() (int, net.Listener) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln.Addr().(*net.TCPAddr).Port, ln
	}
	tgz := func(port int) string {
		e, err := emulator.New(emulator.Options{ClockMode: emulator.ClockManual, ClockStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EdgeURLPort: port})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(e.Handler())
		defer func() { srv.Close(); e.Close() }()
		_, body := httpCall(t, srv.URL, "POST", "/v1/deployments", "hostemu-deploy", `{"project_id":"prj_demo","files":{}}`)
		if want := fmt.Sprintf(`.hostemu.localhost:%d"`, port); !strings.Contains(string(body), want) {
			t.Fatalf("the deployment's url does not carry the port: %s", body)
		}
		_, b := httpCall(t, srv.URL, "GET", "/_emulator/bundle", "", "")
		file := filepath.Join(t.TempDir(), "b.hostemu.tgz")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	unset := map[string]string{"HOSTEMU_TLS_ADDR": ""} // as on a laptop: the default

	port, ln := free()
	ln.Close()
	s := startCmd(t, unset, "replay", tgz(port), "--addr", "127.0.0.1:0")
	if want := fmt.Sprintf("HTTPS on 127.0.0.1:%d, the port its deployment URLs carry", port); !strings.Contains(s.stdout.String(), want) {
		t.Errorf("stdout does not say %q:\n%s", want, s.stdout)
	}
	if want := fmt.Sprintf("https://127.0.0.1:%d", port); !strings.Contains(s.stdout.String(), want) {
		t.Errorf("the banner has no %s:\n%s", want, s.stdout)
	}

	taken, hold := free()
	defer hold.Close()
	s = startCmd(t, unset, "replay", tgz(taken), "--addr", "127.0.0.1:0")
	if want := fmt.Sprintf("carry port %d, which is taken here", taken); !strings.Contains(s.stdout.String(), want) {
		t.Errorf("stdout does not say %q:\n%s", want, s.stdout)
	}

	// the port --addr asks for: HTTPS leaves it to the APIs, and the replay starts
	port, ln = free()
	ln.Close()
	s = startCmd(t, unset, "replay", tgz(port), "--addr", fmt.Sprintf("127.0.0.1:%d", port))
	if want := fmt.Sprintf("carry port %d; --addr has it", port); !strings.Contains(s.stdout.String(), want) {
		t.Errorf("stdout does not say %q:\n%s", want, s.stdout)
	}

	// --tls-addr after FILE, or HOSTEMU_TLS_ADDR, wins
	for _, c := range []struct {
		vars map[string]string
		args []string
	}{
		{unset, []string{"--tls-addr", "127.0.0.1:0"}},
		{map[string]string{"HOSTEMU_TLS_ADDR": "127.0.0.1:0"}, nil},
	} {
		port, ln = free()
		ln.Close()
		s = startCmd(t, c.vars, "replay", append([]string{tgz(port), "--addr", "127.0.0.1:0"}, c.args...)...)
		if strings.Contains(s.stdout.String(), "deployment URLs carry") {
			t.Errorf("%v %v: HTTPS's address was given, yet:\n%s", c.vars, c.args, s.stdout)
		}
	}
}
