package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrokenDefaultBuiltin builds the command with scenarios/default.yaml broken (go
// build -overlay swaps the embedded file, as a developer's edit would) and checks that
// nothing panics: the start fails with the file's problems and exit status 1 (a bug in
// hostemu, not a bad flag), and `hostemu validate` reports every scenario file it cannot
// check, exit 1. TestBuiltinsParse keeps such a binary from shipping; this is what its
// developer meets before that test runs.
func TestBrokenDefaultBuiltin(t *testing.T) {
	// the default sets every key, being the base of all others: one left out is a problem
	run := builtWithBroken(t, "default.yaml", "name: default\ndescription: every other key left out\n")
	const why = "built-in scenario default.yaml is broken (a bug in hostemu): default.yaml:"

	t.Run("start", func(t *testing.T) {
		out, code := run("--addr", "127.0.0.1:0")
		if code != 1 || strings.Contains(out, "panic") || !strings.Contains(out, "hostemu: cannot start: "+why) ||
			!strings.Contains(out, "default.yaml:1:1: the scenario: missing deployments") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})

	t.Run("validate", func(t *testing.T) {
		// a scenario is parsed over the default, and fixtures' lifecycles are the default's
		dir := t.TempDir()
		scenario, fixtures := filepath.Join(dir, "mine.yaml"), filepath.Join(dir, "tokens.yaml")
		if err := os.WriteFile(scenario, []byte("name: mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixtures, []byte("tokens: [{token: t, scope: read}]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := run("validate", scenario, fixtures)
		if code != 1 || strings.Contains(out, "panic") || !strings.Contains(out, scenario+":1: cannot be checked: "+why) ||
			!strings.Contains(out, fixtures+": "+why) {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}

// TestBrokenBuiltinScenarioFlag: --scenario naming a built-in other than the default
// that does not parse stops the start as a broken default.yaml does, naming the file,
// with exit status 1 (a bug in hostemu), not 2 (a bad flag): the world returns the
// *scenario.BuiltinError itself, which emulator.New wrapped in a ConfigError.
func TestBrokenBuiltinScenarioFlag(t *testing.T) {
	run := builtWithBroken(t, "instant.yaml", "name: instant\nfaults: 3\n")
	out, code := run("--addr", "127.0.0.1:0", "--scenario", "instant")
	if code != 1 || strings.Contains(out, "panic") ||
		!strings.Contains(out, "hostemu: cannot start: built-in scenario instant.yaml is broken (a bug in hostemu): instant.yaml:2:") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// builtWithBroken builds the command with the embedded scenarios/<file> replaced by text
// (go build -overlay, as a developer's edit would leave it) and returns a function
// running it, its combined output and exit status. It runs with a CA in memory, so that
// no start writes one into the developer's config directory.
func builtWithBroken(t *testing.T, file, text string) func(args ...string) (string, int) {
	t.Helper()
	goTool := goToBuild(t)
	t.Parallel()
	dir := t.TempDir()
	embedded, err := filepath.Abs("../../scenarios/" + file)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, file)
	if err := os.WriteFile(broken, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{embedded: broken}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hostemu")
	build := exec.Command(goTool, "build", "-tags", "nomsgpack", "-overlay", overlayFile, "-o", bin, "../../cmd/hostemu")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return func(args ...string) (string, int) {
		t.Helper()
		// each run is to fail at once; should a regression make it serve, it is killed
		// rather than left to hang the test (and outlive it)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.WaitDelay = time.Second
		cmd.Env = append(cleanEnv(), "HOSTEMU_CA_DIR="+caInMemory)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("hostemu %s: %v", strings.Join(args, " "), err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
}
