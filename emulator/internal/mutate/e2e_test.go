package mutate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/cli"
	"github.com/hostemu/hostemu/emulator/internal/mutate"
)

// goClient is the sample client's package, run from the module's root.
const goClient = "./emulator/internal/mutate/testdata/goclient"

// moduleRoot is the module's root, where the sample client's path is relative to.
var moduleRoot, _ = filepath.Abs("../../..")

// mutateCLI runs `hostemu mutate args...` in process from the module root and gives
// its exit code, standard output and error.
func mutateCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test on a sample client: not with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	t.Chdir(moduleRoot)
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"mutate"}, args...), os.Getenv, os.Environ(), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// decodeReport reads the JSON report into the type mutate writes it from.
func decodeReport(t *testing.T, out string) mutate.Run {
	t.Helper()
	var r mutate.Run
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out)
	}
	return r
}

// The sample client swallows ProjectCount's errors and returns CreateDeployment's: every
// mutant of listProjects survives, every one of createDeployment is killed, and two runs
// give the same report.
func TestMutateGoSwallowedAndHandled(t *testing.T) {
	args := []string{"--format", "json", "--parallel", "2", "--codes", "service_unavailable,invalid_token,reset", "--", "go", "test", goClient}
	code, out, errOut := mutateCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := decodeReport(t, out)
	if r.Baseline.Runner != "go" || !r.Baseline.Passed || r.Baseline.Tests != 2 || r.Baseline.WithWorlds != 2 {
		t.Errorf("baseline = %+v", r.Baseline)
	}
	want := map[string]string{}
	for _, c := range []string{"invalid_token", "service_unavailable", "reset"} {
		want["TestProjectCount listProjects "+c] = "survived"
		want["TestCreateDeployment createDeployment "+c] = "killed"
	}
	got := map[string]string{}
	for _, m := range r.Mutants {
		got[m.Test+" "+m.Operation+" "+m.Code] = string(m.Result)
		if m.Result == "survived" && !strings.Contains(m.Output, "TestProjectCount") {
			t.Errorf("a survivor's output tail does not show its test: %q", m.Output)
		}
	}
	if len(got) != len(want) {
		t.Errorf("mutants = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if r.Score != 0.5 {
		t.Errorf("score = %v, want 0.5", r.Score)
	}
	// the same suite gives the same mutants in the same order with the same results
	code2, out2, errOut2 := mutateCLI(t, args...)
	if code2 != 0 {
		t.Fatalf("second run: exit %d\n%s", code2, errOut2)
	}
	r2 := decodeReport(t, out2)
	for i := range r.Mutants {
		a, b := r.Mutants[i], r2.Mutants[i]
		if a.Test != b.Test || a.Operation != b.Operation || a.Code != b.Code || a.Result != b.Result {
			t.Errorf("run 2 mutant %d = %+v, run 1 %+v", i, b, a)
		}
	}
	// --min: 50 % passes, 51 % is exit 1 (the report is still written)
	code, out, errOut = mutateCLI(t, "--format", "markdown", "--min", "51", "--codes", "service_unavailable", "--", "go", "test", goClient)
	if code != 1 || !strings.Contains(errOut, "under --min 51%") || !strings.Contains(out, "| `listProjects` (GET /v1/projects) | 503 service_unavailable | TestProjectCount |") {
		t.Errorf("--min 51: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = mutateCLI(t, "--quiet", "--min", "50", "--codes", "service_unavailable", "--", "go", "test", goClient)
	if code != 0 {
		t.Errorf("--min 50: exit %d\n%s", code, errOut)
	}
}

// A baseline that fails is exit 2 with the end of its output; --budget leaves the rest
// not_run.
func TestMutateGoBaselineAndBudget(t *testing.T) {
	t.Setenv("GOCLIENT_FAIL", "1")
	code, out, errOut := mutateCLI(t, "--", "go", "test", goClient)
	if code != 2 || !strings.Contains(errOut, "the baseline failed") || !strings.Contains(errOut, "GOCLIENT_FAIL is set") || out != "" {
		t.Errorf("failing baseline: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	os.Unsetenv("GOCLIENT_FAIL")
	code, out, errOut = mutateCLI(t, "--format", "json", "--budget", "1ns", "--codes", "reset", "--", "go", "test", goClient)
	if code != 0 {
		t.Fatalf("--budget: exit %d\n%s", code, errOut)
	}
	r := decodeReport(t, out)
	if len(r.Mutants) != 2 {
		t.Fatalf("mutants = %+v", r.Mutants)
	}
	for _, m := range r.Mutants {
		if m.Result != "not_run" {
			t.Errorf("%+v: want not_run past the budget", m)
		}
	}
}

// Flags are strict: a typo is exit 2 naming the closest.
func TestMutateFlags(t *testing.T) {
	t.Chdir(moduleRoot)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"go", "test", "./x"}, "put -- before the test command"},
		{[]string{}, "no test command"},
		{[]string{"--"}, "no test command after --"},
		{[]string{"--codes", "service_unavailabel", "--", "go", "test"}, `did you mean "service_unavailable"?`},
		{[]string{"--operations", "createDeploymnet", "--", "go", "test"}, `did you mean "createDeployment"?`},
		{[]string{"--format", "jsn", "--", "go", "test"}, `did you mean "json"?`},
		{[]string{"--runner", "og", "--", "x"}, `did you mean "go"?`},
		{[]string{"--parallel", "0", "--", "go", "test"}, "--parallel 0"},
		{[]string{"--min", "101", "--", "go", "test"}, "percentage"},
		{[]string{"--bogus", "--", "go", "test"}, "unknown flag -bogus"},
		{[]string{"--", "make", "test"}, "cannot tell the test runner"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), append([]string{"mutate"}, tc.args...), os.Getenv, os.Environ(), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("mutate %q: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// The figure: a twelve-test Go suite with at least 150 mutants, the whole
// mutation run against its baseline's wall time (docs/performance.md).
//
//	go test -run '^$' -bench BenchmarkMutateGoSuite12 -benchtime 1x ./emulator/internal/mutate/
func BenchmarkMutateGoSuite12(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go command on PATH")
	}
	b.Chdir(moduleRoot)
	for i := 0; i < b.N; i++ {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), []string{"mutate", "--format", "json", "--quiet", "--", "go", "test", "./emulator/internal/mutate/testdata/gosuite"}, os.Getenv, os.Environ(), &stdout, &stderr)
		if code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
		var r mutate.Run
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		if len(r.Mutants) < 150 {
			b.Fatalf("%d mutants, want at least 150", len(r.Mutants))
		}
		b.ReportMetric(float64(len(r.Mutants)), "mutants")
		b.ReportMetric(float64(r.Runs), "runs")
		b.ReportMetric(float64(r.Baseline.DurationMS), "baseline-ms")
		b.ReportMetric(float64(r.DurationMS), "total-ms")
		b.ReportMetric(float64(r.DurationMS)/float64(r.Baseline.DurationMS), "x-baseline")
	}
}

// Tests that Connect to one running hostemu each get a namespace; rounds run two at a
// time against it, and each mutant lands in its own test's namespace only. The go test
// command here has -args, which keeps `go test` for every round (the slower path).
func TestMutateGoConnectNamespaces(t *testing.T) {
	srv, err := emulator.Listen(emulator.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	t.Setenv("HOSTEMU_URL", srv.URL())
	code, out, errOut := mutateCLI(t, "--format", "json", "--parallel", "2", "--codes", "service_unavailable,invalid_token,reset",
		"--", "go", "test", "./emulator/internal/mutate/testdata/goconnect", "-args")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "each round runs go test") {
		t.Errorf("-args did not keep go test for the rounds:\n%s", errOut)
	}
	r := decodeReport(t, out)
	if len(r.Mutants) != 6 {
		t.Fatalf("mutants: %+v", r.Mutants)
	}
	for _, m := range r.Mutants {
		want := mutate.Killed
		if m.Test == "TestConnectProjectCount" {
			want = mutate.Survived
		}
		if m.Result != want {
			t.Errorf("%s %s %s: %s, want %s", m.Test, m.Operation, m.Code, m.Result, want)
		}
	}
	// the default namespace met none of the mutants, nor any test's request
	for path, empty := range map[string]string{"/_emulator/faults": `"faults":[]`, "/_emulator/requests?path=/v1/*": `"requests":[]`} {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), empty) {
			t.Errorf("GET %s of the default namespace: %s", path, body)
		}
	}
}

// A run over --timeout is killed with its process group, and its mutant is timed_out
// (counted in the score's denominator, not as killed).
func TestMutateGoTimeout(t *testing.T) {
	code, out, errOut := mutateCLI(t, "--format", "json", "--timeout", "3s", "--codes", "service_unavailable",
		"--", "go", "test", "./emulator/internal/mutate/testdata/gohang")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := decodeReport(t, out)
	if len(r.Mutants) != 1 || r.Mutants[0].Result != "timed_out" || r.Score != 0 {
		t.Errorf("report: %s", out)
	}
}
