package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// MutantEnv is set by `hostemu mutate` for the test command it runs: the address of
// its coordinator. Start and Connect then tell it which test made each world, arm the
// fault it hands them, and report the world's coverage when the test ends (see
// docs/mutate.md). Unset, none of this happens.
const MutantEnv = "HOSTEMU_MUTANT"

// mutantTimeout bounds each call to the coordinator.
const mutantTimeout = 10 * time.Second

var mutantClient = &http.Client{Timeout: mutantTimeout}

var testPackage = sync.OnceValue(func() string {
	// a test binary's main package path is the tested package's with .test
	if bi, ok := debug.ReadBuildInfo(); ok {
		return strings.TrimSuffix(bi.Path, ".test")
	}
	return ""
})

// joinMutation takes part in a mutation run when HOSTEMU_MUTANT is set: it says hello
// for tb's test, arms the fault handed back (failing the test when it cannot: a mutant
// never injected must not survive) and, when tb ends, before the world goes (cleanups
// run last-registered first), posts the world's coverage.
func (r *remote) joinMutation(tb testing.TB) {
	coord := os.Getenv(MutantEnv)
	if coord == "" {
		return
	}
	coord = strings.TrimRight(coord, "/")
	var w struct {
		World  string          `json:"world"`
		Fault  json.RawMessage `json:"fault"`
		Report bool            `json:"report"`
	}
	hello := map[string]string{"test": tb.Name(), "package": testPackage()}
	if err := postJSON(coord+"/world", hello, &w); err != nil {
		tb.Fatalf("testkit: hostemu mutate's coordinator (%s=%s): %v", MutantEnv, coord, err)
	}
	if w.World == "" {
		tb.Fatalf("testkit: hostemu mutate's coordinator (%s=%s) answered the world's hello without naming the world, not {\"world\", \"fault\", \"report\"}", MutantEnv, coord)
	}
	if len(w.Fault) > 0 && string(w.Fault) != "null" {
		if err := r.do(context.Background(), http.MethodPost, "/_emulator/faults", w.Fault, nil); err != nil {
			tb.Fatalf("testkit: arming hostemu mutate's fault %s: %v", w.Fault, err)
		}
	}
	if !w.Report {
		return
	}
	tb.Cleanup(func() {
		var cov json.RawMessage
		if err := r.do(context.Background(), http.MethodGet, "/_emulator/coverage", nil, &cov); err != nil {
			tb.Logf("testkit: reading coverage for hostemu mutate: %v", err)
			return
		}
		if err := postJSON(coord+"/coverage", map[string]any{"world": w.World, "coverage": cov}, nil); err != nil {
			tb.Logf("testkit: reporting coverage to hostemu mutate: %v", err)
		}
	})
}

// postJSON posts body to url and decodes a 2xx answer into out (nil: none).
func postJSON(url string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	status, err := exchange(context.Background(), mutantClient, http.MethodPost, url, raw, http.Header{"Content-Type": {"application/json"}}, 1<<20, out)
	if err != nil {
		return fmt.Errorf("POST %s: %w (status %d)", url, err, status)
	}
	return nil
}
