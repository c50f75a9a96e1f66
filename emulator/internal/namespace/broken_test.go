package namespace

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// A scenario whose file is broken is refused with the same words wherever a world is
// given it: the default world's start (--scenario, the binary's path and
// emulator.New's), PUT /_emulator/scenarios/active in the default world, a new
// namespace naming it, and a namespace given scenario documents of its own, at its
// creation and when it switches later. The last one drifted: its derived registry
// knew nothing of the directory's broken files, so a switch ran the last good
// version, or the built-in a never-parsed file meant to override.
func TestBrokenScenarioRefusedAlikeEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	const lifecycle = "deployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	write("mine.yaml", "name: mine\n"+lifecycle)
	if ps := reg.LoadDir(dir); len(ps) > 0 {
		t.Fatal(ps)
	}
	write("mine.yaml", "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n") // broken after it parsed
	write("flaky.yaml", "name: flaky\ndeployments: [\n")                                                 // never parsed, overrides a built-in
	write("gone.yaml", "description: nothing\ndeployments: [\n")                                         // never parsed, named by its file
	reg.LoadDir(dir)

	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &Worlds{Base: world.Config{ClockMode: clock.Manual, ClockStart: start, Scenarios: reg, Logger: slog.New(slog.DiscardHandler)}, Start: start}
	id := func(label string) Identity {
		return Identity{ID: Prefix + label, Label: label, Tokens: Tokens{Read: "r", Deploy: "d", Admin: "a"}, CipherKey: "c"}
	}
	own := []string{"name: own\n" + lifecycle}
	ownName := "own"
	def, err := b.Default()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(def.Close)
	ns, err := b.Namespace(id("ownscenarios"), Spec{Scenarios: own, Scenario: &ownName})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)

	for _, name := range []string{"mine", "flaky", "gone"} {
		t.Run(name, func(t *testing.T) {
			want := reg.BrokenMessage(name)
			if want == "" {
				t.Fatalf("the registry does not call %s broken", name)
			}
			refused := func(how string, err error) {
				t.Helper()
				e, ok := apperr.As(err)
				switch {
				case err == nil:
					t.Errorf("%s: accepted, want refused with %q", how, want)
				case !ok || e.Code != apperr.InvalidRequest || e.Message != want:
					t.Errorf("%s: %v\nwant invalid_request: %s", how, err, want)
				}
			}
			start := b.Base
			start.Scenario = name
			started := &Worlds{Base: start, Start: b.Start}
			if w, err := started.Default(); err == nil {
				w.Close()
				t.Errorf("--scenario %s: started", name)
			} else if err.Error() != want {
				t.Errorf("--scenario %s: %q\nwant %q", name, err, want)
			}
			refused("PUT active in the default world", def.UseScenario(&name))
			w, err := b.Namespace(id("named"), Spec{Scenario: &name})
			if err == nil {
				w.Close()
			}
			refused("a new namespace", err)
			w, err = b.Namespace(id("namedown"), Spec{Scenarios: own, Scenario: &name})
			if err == nil {
				w.Close()
			}
			refused("a new namespace with scenarios of its own", err)
			refused("PUT active in a namespace with scenarios of its own", ns.UseScenario(&name))
			if got := ns.Scenario().Name; got != ownName {
				t.Errorf("the namespace switched to %s", got)
			}
		})
	}
}

// A scenario file that changes between a new namespace's choice of its scenario and the
// build of its world (Worlds.afterChoice stands for that moment) cannot turn the
// answer: the scenario is asked once, and the world starts on the version chosen. It
// was asked twice, and the second answer, a deleted file's scenario_not_found or a
// broken one's problems, came back as invalid_request.
func TestScenarioGoneBetweenChecks(t *testing.T) {
	t.Parallel()
	const good = "name: mine\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"deleted", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"broken", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("name: mine\ndeployments: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "mine.yaml")
			if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			reg, err := scenario.NewRegistry()
			if err != nil {
				t.Fatal(err)
			}
			if ps := reg.LoadDir(dir); len(ps) > 0 {
				t.Fatal(ps)
			}
			start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			b := &Worlds{Base: world.Config{ClockMode: clock.Manual, ClockStart: start, Scenarios: reg, Logger: slog.New(slog.DiscardHandler)}, Start: start}
			changed := 0
			b.afterChoice = func() {
				changed++
				tt.change(t, path)
				reg.LoadDir(dir)
			}
			name := "mine"
			w, err := b.Namespace(Identity{ID: Prefix + "late", Label: "late", Tokens: Tokens{Read: "r", Deploy: "d", Admin: "a"}, CipherKey: "c"}, Spec{Scenario: &name})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			defer w.Close()
			if changed != 1 {
				t.Fatalf("the hook ran %d times", changed)
			}
			if got := w.Scenario(); got.Name != name || string(got.Raw) != good {
				t.Errorf("started on %q:\n%s\nwant the version chosen", got.Name, got.Raw)
			}
			// the registry did change: the next namespace is refused with the
			// scenario's own answer
			b.afterChoice = nil
			_, err = b.Namespace(Identity{ID: Prefix + "later", Label: "later", Tokens: Tokens{Read: "r", Deploy: "d", Admin: "a"}, CipherKey: "c"}, Spec{Scenario: &name})
			want := apperr.ScenarioNotFound
			if tt.name == "broken" {
				want = apperr.InvalidRequest // the file's problems, as everywhere
			}
			if e, _ := apperr.As(err); e == nil || e.Code != want {
				t.Errorf("the next namespace: %v, want %s", err, want)
			}
		})
	}
}
