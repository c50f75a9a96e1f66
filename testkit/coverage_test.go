package testkit_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/testkit"
)

// seenOf is how often op answered status code in c.
func seenOf(c emulator.Coverage, method, path string, status int, code string) int64 {
	for _, o := range c.Operations {
		if o.Method != method || o.Path != path {
			continue
		}
		for _, r := range o.Responses {
			if r.Status == status && (r.Code == nil && code == "" || r.Code != nil && *r.Code == code) {
				return r.Seen
			}
		}
	}
	return -1
}

func TestCoverageOfAnEmulatorAndOfThePackage(t *testing.T) {
	before := seenOf(testkit.CollectedCoverage(), "POST", "/v1/files", 401, "missing_token")
	if before < 0 {
		before = 0
	}
	for i := range 2 {
		t.Run(fmt.Sprint("world", i), func(t *testing.T) {
			emu := testkit.Start(t, testkit.WithoutTLS())
			res, err := http.Post(emu.URL()+"/v1/files", "application/octet-stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			c := emu.Coverage()
			if got := seenOf(c, "POST", "/v1/files", 401, "missing_token"); got != 1 {
				t.Fatalf("POST /v1/files 401 missing_token seen %d, want 1", got)
			}
			if c.Totals.Operations.Seen != 1 || c.Totals.Operations.Total == 0 {
				t.Fatalf("totals %+v", c.Totals)
			}
			emu.ResetCoverage()
			if got := emu.Coverage().Totals.Operations.Seen; got != 0 {
				t.Fatalf("after ResetCoverage: %d operations seen", got)
			}
			res, _ = http.Post(emu.URL()+"/v1/files", "application/octet-stream", nil)
			res.Body.Close()
		})
	}
	// both worlds ended: the package's coverage holds what each saw at its end
	if got := seenOf(testkit.CollectedCoverage(), "POST", "/v1/files", 401, "missing_token"); got-before < 2 {
		t.Fatalf("collected POST /v1/files 401 missing_token went from %d to %d, want +2", before, got)
	}
}

// A TestMain that fails a package's run when its tests never exercised what the client
// must handle: here, a rate limit on any operation. testkit.CollectedCoverage adds up
// every emulator the package's tests started or connected to, once each test ended.
func Example_coverageInTestMain() {
	testMain := func(m interface{ Run() int }) int { // func TestMain(m *testing.M) in a _test.go file
		code := m.Run()
		cov := testkit.CollectedCoverage()
		var rateLimited int64
		for _, op := range cov.Operations {
			for _, r := range op.Responses {
				if r.Status == 429 {
					rateLimited += r.Seen
				}
			}
		}
		if code == 0 && rateLimited == 0 {
			fmt.Fprintln(os.Stdout, "no test saw a 429 rate_limited: add one (testkit: InjectFault with RateLimit)")
			code = 1
		}
		fmt.Printf("responses exercised: %d of %d\n", cov.Totals.Responses.Seen, cov.Totals.Responses.Total)
		return code // os.Exit(code)
	}
	_ = testMain
}

// The coverage file hostemu coverage reads applies to the testkit's coverage too (#33).
func TestIgnoreCoverageAppliesTheCoverageFile(t *testing.T) {
	emu := testkit.Start(t, testkit.WithoutTLS())
	cov := emu.Coverage()
	file := t.TempDir() + "/cov.yaml"
	if err := os.WriteFile(file, []byte("ignore:\n  - code: internal_error\n    reason: every 500 alike\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := testkit.IgnoreCoverage(cov, file)
	if err != nil {
		t.Fatal(err)
	}
	if got.Totals.Ignored != len(cov.Operations) || got.Totals.Responses.Total != cov.Totals.Responses.Total-len(cov.Operations) {
		t.Fatalf("totals %+v, want the %d operations' 500s left out of %+v", got.Totals, len(cov.Operations), cov.Totals)
	}
	if err := os.WriteFile(file, []byte("ignore:\n  - code: internal_eror\n    reason: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.IgnoreCoverage(cov, file); err == nil || !strings.Contains(err.Error(), `cov.yaml:2:11: ignore[0].code: "internal_eror" is not an error code (did you mean "internal_error"?)`) {
		t.Fatalf("a misspelt code: %v", err)
	}
}
