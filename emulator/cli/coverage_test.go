package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// coverageServer is a running emulator (the embedded default world) that has answered
// a few requests: GET /v1/projects 200 and 401, a deployment created and built.
func coverageServer(t *testing.T) string {
	t.Helper()
	e, err := emulator.New(emulator.Options{ClockMode: emulator.ClockManual, ClockStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	do := func(method, path, token, body string, want int) {
		t.Helper()
		if status, _ := httpCall(t, srv.URL, method, path, token, body); status != want {
			t.Fatalf("%s %s: %d, want %d", method, path, status, want)
		}
	}
	do("GET", "/v1/projects", "", "", 401)
	do("GET", "/v1/projects", "hostemu-read", "", 200)
	do("POST", "/v1/deployments", "hostemu-deploy", `{"project_id":"prj_demo","files":{}}`, 201)
	do("POST", "/_emulator/clock/advance", "", `{"by":"1m"}`, 200)
	return srv.URL
}

func runCoverage(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), append([]string{"coverage"}, args...), func(string) string { return "" }, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCoverageCommandExitCodes(t *testing.T) {
	url := coverageServer(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no minimum", []string{"--url", url}, 0, ""},
		{"met", []string{"--url", url, "--min", "1", "--min-transitions=10"}, 0, ""},
		{"total under", []string{"--url", url, "--min", "90"}, 1, "total coverage"},
		{"responses under names what was missed", []string{"--url", url, "--min-responses", "50"}, 1, "GET /v1/projects: 400 invalid_cursor"},
		{"operations under", []string{"--url", url, "--min-operations=100%"}, 1, "POST /v1/files: never called"},
		{"transitions under", []string{"--url", url, "--min-transitions", "100"}, 1, "deployment building → error"},
		{"url ending in the route", []string{"--url", url + "/_emulator/coverage", "--min", "1"}, 0, ""},
		{"all namespaces", []string{"--url", url, "--namespaces", "all"}, 0, ""},
		{"unknown namespace", []string{"--url", url, "--namespace", "ns_nope"}, 1, "namespace_not_found"},
		{"bad min", []string{"--url", url, "--min", "101"}, 2, "from 0 to 100"},
		{"bad format", []string{"--url", url, "--format", "junt"}, 2, `did you mean "junit"`},
		{"bad namespaces", []string{"--url", url, "--namespaces", "al"}, 2, `did you mean "all"`},
		{"unknown flag", []string{"--url", url, "--mni", "3"}, 2, "mni"},
		{"nobody there", []string{"--url", "http://127.0.0.1:1"}, 1, "is hostemu running there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCoverage(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q, want it to contain %q", code, tc.code, stderr, tc.stderr)
			}
		})
	}
}

func TestCoverageCommandFormats(t *testing.T) {
	url := coverageServer(t)

	_, out, _ := runCoverage(t, "--url", url, "--format", "json")
	var r coverage.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if r.Totals.Operations.Seen != 2 || r.Totals.Responses.Seen != 3 {
		t.Fatalf("json totals %+v, want 2 operations and 3 answers seen", r.Totals)
	}

	_, out, _ = runCoverage(t, "--url", url)
	for _, want := range []string{"operations      2 of   12", "responses       3 of  127", "never exercised", "GET /v1/projects: 400 invalid_cursor", "faults fired: status 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}

	_, out, _ = runCoverage(t, "--url", url, "--format", "markdown", "--min", "50")
	for _, want := range []string{"### hostemu coverage: ", "| operations | 2 | 12 |", "| `GET /v1/projects` | 2 | 200 ×1, 401 missing_token ×1 |", "**Under the minimum:**", "| deployment queued → building | 1 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}

	// JUnit, read by a JUnit XML reader: every documented answer and edge is a case,
	// the unexercised ones skipped, and a minimum not met a failure
	code, out, _ := runCoverage(t, "--url", url, "--format", "junit", "--min", "50")
	if code != 1 {
		t.Fatalf("junit under --min: exit %d", code)
	}
	suites, err := junit.Ingest([]byte(out))
	if err != nil {
		t.Fatalf("junit: %v\n%s", err, out)
	}
	byName := map[string]junit.Suite{}
	for _, s := range suites {
		byName[s.Name] = s
	}
	resp, trans, th := byName["hostemu coverage: responses"], byName["hostemu coverage: transitions"], byName["hostemu coverage: thresholds"]
	if resp.Totals.Tests != r.Totals.Responses.Total || resp.Totals.Skipped != r.Totals.Responses.Total-3 || resp.Totals.Passed != 3 {
		t.Errorf("responses suite totals %+v, want %d cases, 3 passed", resp.Totals, r.Totals.Responses.Total)
	}
	if trans.Totals.Tests != r.Totals.Transitions.Total || trans.Totals.Passed != r.Totals.Transitions.Seen {
		t.Errorf("transitions suite totals %+v", trans.Totals)
	}
	if th.Totals.Failed != 1 || th.Tests[0].Error == nil || !strings.Contains(th.Tests[0].Error.Error(), "under --min 50") {
		t.Errorf("thresholds suite: %+v", th)
	}
	var found bool
	for _, c := range resp.Tests {
		if c.Name == "GET /v1/projects → 429 rate_limited" {
			found = c.Status == junit.StatusSkipped
		}
	}
	if !found {
		t.Error("GET /v1/projects → 429 rate_limited is not a skipped case")
	}
}

// TestCoverageCommandIgnores: rows a client cannot meet (#33: 500, 413 and 415 of every
// operation) are left out of the totals and the minimums by --ignore and a coverage
// file, and listed as ignored in every format.
func TestCoverageCommandIgnores(t *testing.T) {
	url := coverageServer(t)
	_, out, _ := runCoverage(t, "--url", url, "--format", "json")
	var before coverage.Report
	if err := json.Unmarshal([]byte(out), &before); err != nil {
		t.Fatal(err)
	}
	var count500 int
	for _, o := range before.Operations {
		for _, a := range o.Responses {
			if a.Code != nil && (*a.Code == "internal_error" || *a.Code == "payload_too_large") {
				count500++
			}
		}
	}

	dir := t.TempDir()
	t.Chdir(dir)
	// the working directory's file is read by default
	os.WriteFile(filepath.Join(dir, ".hostemu-coverage.yaml"), []byte("ignore:\n  - transition: certificate issued -> error (renewal)\n    reason: renewals are the host's\n"), 0o644)
	code, out, stderr := runCoverage(t, "--url", url, "--format", "json", "--ignore", "internal_error,payload_too_large")
	var after coverage.Report
	if err := json.Unmarshal([]byte(out), &after); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s", code, err, stderr)
	}
	if after.Totals.Responses.Total != before.Totals.Responses.Total-count500 || after.Totals.Transitions.Total != before.Totals.Transitions.Total-1 || after.Totals.Ignored != count500+1 {
		t.Fatalf("totals %+v after ignoring %d answers and one edge of %+v", after.Totals, count500, before.Totals)
	}
	// the minimum that failed with them passes without them
	min := strconv.FormatFloat(after.Totals.Responses.Percent, 'f', 1, 64)
	os.WriteFile(filepath.Join(dir, "empty.yaml"), nil, 0o644)
	if code, _, _ := runCoverage(t, "--url", url, "--min-responses", min, "--config", "empty.yaml"); code != 1 {
		t.Fatalf("--min-responses %s without ignoring: exit %d, want 1", min, code)
	}
	if code, _, stderr := runCoverage(t, "--url", url, "--min-responses", min, "--ignore", "internal_error,payload_too_large"); code != 0 {
		t.Fatalf("--min-responses %s ignoring: exit %d: %s", min, code, stderr)
	}

	_, out, _ = runCoverage(t, "--url", url, "--ignore", "internal_error")
	for _, want := range []string{"ignored, not in the totals (", "  --ignore:\n    POST /v1/decrypt: 500 internal_error", "\n    GET /v1/projects: 500 internal_error", "  renewals are the host's:\n    certificate issued → error (renewal)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out[:strings.Index(out, "ignored, not in")], "500 internal_error") {
		t.Errorf("text lists an ignored answer as never exercised:\n%s", out)
	}
	_, out, _ = runCoverage(t, "--url", url, "--format", "markdown", "--ignore", "internal_error")
	if !strings.Contains(out, "| GET /v1/projects: 500 internal_error | --ignore |") || !strings.Contains(out, "| certificate issued → error (renewal) | 0 (ignored) |") {
		t.Errorf("markdown lacks the ignored rows:\n%s", out)
	}
	_, out, _ = runCoverage(t, "--url", url, "--format", "junit", "--ignore", "internal_error")
	if !strings.Contains(out, `message="ignored: --ignore"`) || !strings.Contains(out, `message="ignored: renewals are the host&#39;s"`) {
		t.Errorf("junit lacks the ignored cases:\n%s", out)
	}

	// mistakes: named with the closest, line and column
	for _, tc := range []struct {
		args []string
		file string
		want string
	}{
		{[]string{"--ignore", "internal_eror"}, "", `--ignore: "internal_eror" is not an error code`},
		{nil, "ignore:\n  - code: internal_error\n    reasn: x\n", `.hostemu-coverage.yaml:3:5: ignore[0]: unknown key "reasn" (did you mean "reason"?)`},
		{[]string{"--config", "nope.yaml"}, "", "nope.yaml: "},
	} {
		os.WriteFile(filepath.Join(dir, ".hostemu-coverage.yaml"), []byte(tc.file), 0o644)
		code, _, stderr := runCoverage(t, append([]string{"--url", url}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v with %q: exit %d, %q; want 2 and %q", tc.args, tc.file, code, stderr, tc.want)
		}
	}
}
