package emulator

import (
	"bytes"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// buildNamespace makes the world of a new namespace: the server's parsed fixtures (or
// the ones given), seed, clock and start-up scenario unless spec says otherwise, with
// the namespace's own credentials, deployment hosts and minted-token prefix.
// maxNamespaceGenerated bounds the deployments, and the domains, a namespace's inline
// fixtures may generate: a 100-byte request must not build a million of them (and again
// on each reset). --max-world-bytes bounds all namespaces together.
const maxNamespaceGenerated = 10_000

func (e *Emulator) buildNamespace(id namespace.Identity, spec namespace.Spec) (*world.World, error) {
	o := e.opts
	seed := o.Seed
	if spec.Seed != nil {
		seed = *spec.Seed
	}
	mode := o.ClockMode
	if spec.Clock != nil {
		m, err := clock.ParseMode(*spec.Clock)
		if err != nil {
			return nil, apperr.New(apperr.InvalidRequest, `field "clock" must be "real" or "manual"`)
		}
		mode = m
	}
	start, clockStart := e.start, e.clockStart
	if spec.ClockStart != nil {
		t, err := time.Parse(time.RFC3339, *spec.ClockStart)
		if err != nil || !state.InRange(t) {
			return nil, apperr.Errorf(apperr.InvalidRequest, `field "clock_start" must be an RFC 3339 time from %d to %d`, state.MinYear, state.MaxYear)
		}
		start, clockStart = t.UTC(), t.UTC()
	}
	if mode == clock.Manual && clockStart.IsZero() {
		clockStart = start
	}
	scenarioName := o.Scenario
	if spec.Scenario != nil {
		scenarioName = *spec.Scenario
	}
	if scenarioName == "" {
		scenarioName = "default"
	}
	if _, ok := e.reg.Get(scenarioName); !ok {
		return nil, apperr.New(apperr.ScenarioNotFound, e.reg.NotFound(scenarioName))
	}
	files := e.fixtures
	if raw := bytes.TrimSpace(spec.Fixtures); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		f, problems := fixture.Parse("fixtures", raw) // JSON is YAML
		if err := problemsError(problems); err != nil {
			return nil, apperr.New(apperr.InvalidRequest, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		if g := f.Generate; g != nil && g.Projects*max(g.DeploymentsPerProject, 5) > maxNamespaceGenerated {
			return nil, apperr.Errorf(apperr.InvalidRequest, "fixtures.generate: at most %d generated deployments in a namespace (a world of its own per test); use --fixtures for a big one", maxNamespaceGenerated)
		}
		if g := f.Generate; g != nil && g.Projects*max(g.DomainsPerProject, 1) > maxNamespaceGenerated {
			return nil, apperr.Errorf(apperr.InvalidRequest, "fixtures.generate: at most %d generated domains in a namespace (projects × domains_per_project); use --fixtures for a big one", maxNamespaceGenerated)
		}
		files = []*fixture.File{f}
	}
	edgeDomain := o.EdgeDomain
	if edgeDomain == "" {
		edgeDomain = state.DefaultEdgeDomain
	}
	w, err := world.New(world.Config{
		Seed: seed, ClockMode: mode, ClockStart: clockStart,
		Fixtures:  fixtureBuilder(files, seed, start, id.Label+"."+edgeDomain, o.edgeURLForm(), &id),
		Scenarios: e.reg, Scenario: scenarioName, JournalSize: o.JournalSize,
		RateLimitsOff: o.RateLimitsOff, Logger: o.Logger.With("namespace", id.ID),
		EdgeDomain: o.EdgeDomain, URLForm: o.edgeURLForm(), FileStoreSize: o.FileStoreSize, FileBudget: e.files,
		Namespace: id.Label, TokenPrefix: namespace.TokenPrefix(id.Label),
		Grow: func(w *world.World, delta int64) error { return e.ns.Grow(w, delta) },
	})
	if err != nil {
		return nil, apperr.New(apperr.InvalidRequest, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return w, nil
}
