package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main itself when the test binary is started as loadgen by the tests
// below.
func TestMain(m *testing.M) {
	if os.Getenv("LOADGEN_TEST_MAIN") != "" {
		os.Args = append([]string{"loadgen"}, strings.Fields(os.Getenv("LOADGEN_TEST_MAIN"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loadgen runs main with args against a server answering 204, and is its output and
// whether it exited 0.
func loadgen(t *testing.T, args string) (string, bool) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "LOADGEN_TEST_MAIN="+args+" "+srv.URL+"/")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func TestFixedCountDone(t *testing.T) {
	out, ok := loadgen(t, "-c 2 -n 5 -d 60s")
	if !ok || !strings.Contains(out, "Requests: 5\n") {
		t.Fatalf("-n 5 within 60 s: exited 0 %v:\n%s", ok, out)
	}
}

// TestFixedCountCutShort: a -d that ends before -n's requests are answered is a
// failure, not a shorter measure.
func TestFixedCountCutShort(t *testing.T) {
	out, ok := loadgen(t, "-c 2 -n 1000000000 -d 50ms")
	if ok || !strings.Contains(out, "of the 1000000000 requests") {
		t.Fatalf("-n 1e9 in 50 ms: exited 0 %v:\n%s", ok, out)
	}
}
