package perf_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// serverEnv is the environment of a server the harness starts (hostemu, the reference,
// a bundle's replay): the caller's, without its HOSTEMU_* variables, then extra. hostemu
// reads HOSTEMU_* as its flags' defaults, so a caller's HOSTEMU_RATE_LIMITS or
// HOSTEMU_STATE would change the server measured, and HOSTEMU_PERF_* are the harness's
// own; the rest (PATH, HOME, GOMAXPROCS, a GODEBUG of the caller's) is kept.
func serverEnv(environ []string, extra ...string) []string {
	out := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "HOSTEMU_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// serverEnvNow is serverEnv of this process's environment.
func serverEnvNow(extra ...string) []string { return serverEnv(os.Environ(), extra...) }

// A server the harness starts inherits nothing of HOSTEMU_* (nor takes a flag default
// from it), keeps the rest in order, and takes the traced path's GODEBUG last, where it
// wins over a caller's.
func TestServerEnvDropsHostemuVariables(t *testing.T) {
	t.Parallel()
	in := []string{"PATH=/usr/bin", "HOSTEMU_PERF=1", "HOSTEMU_RATE_LIMITS=on", "GODEBUG=madvdontneed=1", "HOSTEMU_STATE=/tmp/s.json", "HOME=/root", "XHOSTEMU_KEEP=1", "hostemu_lower=1"}
	want := []string{"PATH=/usr/bin", "GODEBUG=madvdontneed=1", "HOME=/root", "XHOSTEMU_KEEP=1", "hostemu_lower=1"}
	if got := serverEnv(in); !slices.Equal(got, want) {
		t.Errorf("serverEnv:\n got %q\nwant %q", got, want)
	}
	if got := serverEnv(in, "GODEBUG=gctrace=1"); !slices.Equal(got, append(slices.Clone(want), "GODEBUG=gctrace=1")) {
		t.Errorf("traced: %q", got)
	}
	if got := serverEnv(nil); got == nil || len(got) != 0 {
		t.Errorf("an empty environment: %#v, want an empty one (nil would be the caller's)", got)
	}
	if in[1] != "HOSTEMU_PERF=1" {
		t.Error("serverEnv changed its argument")
	}
}
