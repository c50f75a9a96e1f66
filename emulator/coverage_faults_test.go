package emulator_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// Coverage counts each fault action as it counts the older ones: a firing counts its
// effect (status, error, rate_limit, timeout, drop, pass, or delay when a delay is all it
// adds), each way it changed the answer (headers, body, break_<kind>) and then for each
// step of a then sequence.
func TestCoverageCountsEachFaultAction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tt := range []struct {
		name     string
		fault    map[string]any
		requests int
		want     map[string]int64
	}{
		{"error", map[string]any{"error": "service_unavailable", "times": 1}, 1, map[string]int64{"error": 1}},
		{"headers", map[string]any{"headers": map[string]string{"X-Injected": "1"}, "times": 1}, 1, map[string]int64{"headers": 1}},
		{"body", map[string]any{"body": map[string]any{"ok": true}, "times": 1}, 1, map[string]int64{"body": 1}},
		{"status with headers and body", map[string]any{"status": 500, "body": "oops", "headers": map[string]string{"Retry-After": "7"}, "times": 1}, 1,
			map[string]int64{"status": 1, "headers": 1, "body": 1}},
		{"delay", map[string]any{"delay": "1ms", "times": 1}, 1, map[string]int64{"delay": 1}},
		{"delay with headers", map[string]any{"delay": "1ms", "headers": map[string]string{"X-Injected": "1"}, "times": 1}, 1, map[string]int64{"delay": 1, "headers": 1}},
		{"break reset", map[string]any{"break": "reset", "times": 1}, 1, map[string]int64{"break_reset": 1}},
		{"break empty", map[string]any{"break": "empty", "times": 1}, 1, map[string]int64{"break_empty": 1}},
		{"break truncate", map[string]any{"break": "truncate", "after_bytes": 5, "times": 1}, 1, map[string]int64{"break_truncate": 1}},
		{"break malformed", map[string]any{"break": "malformed", "times": 1}, 1, map[string]int64{"break_malformed": 1}},
		{"break slow", map[string]any{"break": "slow", "bytes_per_second": 1 << 20, "times": 1}, 1, map[string]int64{"break_slow": 1}},
		{"break wrong_type", map[string]any{"break": "wrong_type", "times": 1}, 1, map[string]int64{"break_wrong_type": 1}},
		{"error with a break", map[string]any{"error": "service_unavailable", "break": "truncate", "times": 1}, 1, map[string]int64{"error": 1, "break_truncate": 1}},
		{"then", map[string]any{"then": []any{map[string]any{"error": "service_unavailable"}, map[string]any{"break": "reset"}, map[string]any{"pass": true}}}, 4,
			map[string]int64{"then": 3, "error": 1, "break_reset": 1, "pass": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/coverage"}), 200)
			e.clearFaults(t)
			f := map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/projects"}}
			for k, v := range tt.fault {
				f[k] = v
			}
			e.addFault(t, f)
			for range tt.requests {
				fire(t, e.url+"/v1/projects")
			}
			x := e.coverage(t, "/_emulator/coverage")
			want := map[string]int64{}
			for _, a := range coverage.FaultActions {
				want[a] = tt.want[a]
			}
			x.want(t, x.faults, "fault", want)
		})
	}
}

// fire makes a request as a client of the hosting API, whatever becomes of it (a fault
// may break the connection): the fault fires once it is answered or broken.
func fire(t *testing.T, url string) {
	t.Helper()
	r, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer t-read")
	r.Close = true // a broken connection is not reused
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}
