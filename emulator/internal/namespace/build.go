package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// MaxGenerated bounds the deployments, and the domains, a namespace's inline fixtures
// may generate: a 100-byte request must not build a million of them (and again on each
// reset). --max-world-bytes bounds all namespaces together.
const MaxGenerated = 10_000

// Worlds builds a server's worlds, the default one and each namespace's, from the same
// parsed fixtures, scenarios and options.
type Worlds struct {
	// Base is the default world's configuration; Fixtures and Grow are set per world.
	Base world.Config
	// Files are the parsed fixtures (Fixtures parses them); Start is their start.
	Files []*fixture.File
	Start time.Time
	// MaxBytes holds the default world, on its own, to that many bytes
	// (DefaultMaxBytes when 0) as it grows through the API; what its fixtures or an
	// import bring is bounded by --fixtures and --max-state-bytes.
	MaxBytes int64
	// Grow is the namespaces' bound: the registry's Grow. Set before the first
	// namespace is built.
	Grow func(w *world.World, delta int64) error

	// templates are the namespaces' start-up states built so far, cloned for each new
	// namespace (and reset) of the same fixtures, seed and options.
	templates templates
	// afterChoice, when set (tests), runs between the choice of a new namespace's
	// scenario and the build of its world: where a scenario file can change.
	afterChoice func()
}

// Fixtures parses the fixtures at path (the embedded ones when path is ""), once: every
// world is built from the parsed form.
func Fixtures(path string) ([]*fixture.File, error) {
	var files []*fixture.File
	var problems []fixture.Problem
	if path == "" {
		files, problems = fixture.Embedded()
	} else {
		files, problems = fixture.ParsePath(path)
	}
	return files, problemsError(problems)
}

// Default builds the default world, not yet started.
func (b *Worlds) Default() (*world.World, error) {
	cfg := b.Base
	// world.New refuses a --scenario whose file is broken or never parsed, as choosing
	// it later is (world.ChooseScenario), "default" when unnamed included
	cfg.Fixtures = b.snapshot(b.Files, cfg.Seed, b.Start, cfg.EdgeDomain, cfg.URLForm)
	max := b.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	cfg.MaxBytes = max
	cfg.Grow = func(w *world.World, delta int64) error {
		if used := w.Weight(); used+delta > max {
			return apperr.Errorf(apperr.StorageFull, "the world holds about %d bytes of the %d --max-world-bytes allows; %d more do not fit: reset it, or import a smaller state", used, max, delta)
		}
		return nil
	}
	return world.New(cfg)
}

// Namespace makes the world of a new namespace: the server's parsed fixtures (or the
// ones given), seed, clock and start-up scenario unless spec says otherwise, with the
// namespace's own credentials, deployment hosts and minted-token prefix. It is the
// registry's Config.Build.
func (b *Worlds) Namespace(id Identity, spec Spec) (*world.World, error) {
	cfg := b.Base
	if spec.Seed != nil {
		cfg.Seed = *spec.Seed
	}
	if spec.Clock != nil {
		m, err := clock.ParseMode(*spec.Clock)
		if err != nil {
			return nil, apperr.New(apperr.InvalidRequest, `field "clock": `+err.Error())
		}
		cfg.ClockMode = m
	}
	start := b.Start
	if spec.ClockStart != nil {
		t, err := time.Parse(time.RFC3339, *spec.ClockStart)
		if err != nil || !state.InRange(t) {
			return nil, apperr.Errorf(apperr.InvalidRequest, `field "clock_start" must be an RFC 3339 time from %d to %d`, state.MinYear, state.LastYear)
		}
		start, cfg.ClockStart = t.UTC(), t.UTC()
	}
	if cfg.ClockMode.Stands() && cfg.ClockStart.IsZero() {
		cfg.ClockStart = start
	}
	if len(spec.Scenarios) > MaxScenarios {
		return nil, apperr.Errorf(apperr.InvalidRequest, `field "scenarios" holds %d documents, at most %d`, len(spec.Scenarios), MaxScenarios)
	}
	total := 0
	for i, doc := range spec.Scenarios {
		if len(doc) > MaxScenarioBytes {
			return nil, apperr.Errorf(apperr.InvalidRequest, `field "scenarios[%d]" is %d bytes, at most %d`, i, len(doc), MaxScenarioBytes)
		}
		if total += len(doc); total > MaxScenariosBytes {
			return nil, apperr.Errorf(apperr.InvalidRequest, `field "scenarios" holds over %d bytes of documents`, MaxScenariosBytes)
		}
	}
	if len(spec.Scenarios) > 0 {
		reg, problems := cfg.Scenarios.Derive("scenarios", spec.Scenarios)
		if len(problems) > 0 {
			msgs := make([]string, len(problems))
			for i, p := range problems {
				msgs[i] = p.String()
			}
			return nil, apperr.New(apperr.InvalidRequest, `field "scenarios": `+strings.Join(msgs, "; "))
		}
		cfg.Scenarios = reg
	}
	if err := b.chooseScenario(&cfg, spec); err != nil {
		return nil, err
	}
	files, doc := b.Files, ""
	if raw := bytes.TrimSpace(spec.Fixtures); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		f, problems := fixture.Parse("fixtures", raw) // JSON is YAML
		if err := fieldProblems(problems, true); err != nil {
			return nil, apperr.New(apperr.InvalidRequest, err.Error())
		}
		if g := f.Generate; g != nil && g.Projects*max(g.DeploymentsPerProject, 5) > MaxGenerated {
			return nil, apperr.Errorf(apperr.InvalidRequest, "fixtures.generate: at most %d generated deployments in a namespace (a world of its own per test); use --fixtures for a big one", MaxGenerated)
		}
		if g := f.Generate; g != nil && g.Projects*max(g.DomainsPerProject, 1) > MaxGenerated {
			return nil, apperr.Errorf(apperr.InvalidRequest, "fixtures.generate: at most %d generated domains in a namespace (projects × domains_per_project); use --fixtures for a big one", MaxGenerated)
		}
		files, doc = []*fixture.File{f}, string(raw)
	}
	edgeDomain := cfg.EdgeDomain
	if edgeDomain == "" {
		edgeDomain = state.DefaultEdgeDomain
	}
	cfg.Fixtures = b.namespaceSnapshot(files, templateKey{doc: doc, seed: cfg.Seed, start: start, edge: edgeDomain, form: cfg.URLForm}, id)
	cfg.Logger = cfg.Logger.With("namespace", id.ID)
	cfg.Namespace, cfg.TokenPrefix = id.Label, TokenPrefix(id.Label)
	cfg.Grow = b.Grow
	cfg.MaxBytes = b.MaxBytes
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	// its own scenarios live as long as it does: their text, and what they parse to
	cfg.Carried = 3 * int64(total)
	w, err := world.New(cfg)
	var refused *world.ScenarioRefusal
	switch {
	case errors.As(err, &refused): // the scenario's own answer: not found, or its file's problems
		return nil, refused.Err
	case err != nil: // the fixtures' problems, or the scenario's faults over --max-faults
		return nil, apperr.New(apperr.InvalidRequest, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return w, nil
}

// chooseScenario sets cfg's scenario for a new namespace: spec's, the one chosen already
// (Spec.StartOn), or by name, spec's or the server's start-up one. A name is asked
// here, before the fixtures are parsed, so that the answer is the scenario's problems
// (or not found) with its status (a derived registry knows the directory's broken
// files, and one of the namespace's own documents overriding a file's scenario is not
// stale). It is asked once: world.New starts on the scenario chosen here
// (Config.Chosen), so a file deleted or broken in between cannot turn this answer.
func (b *Worlds) chooseScenario(cfg *world.Config, spec Spec) error {
	if spec.start != nil {
		cfg.Scenario, cfg.Chosen = spec.start.Name, spec.start
		return nil
	}
	if spec.Scenario != nil {
		if *spec.Scenario == "" { // not "the default": leaving the field out is
			return apperr.New(apperr.ScenarioNotFound, cfg.Scenarios.NotFound(""))
		}
		cfg.Scenario = *spec.Scenario
	}
	if cfg.Scenario == "" {
		cfg.Scenario = "default"
	}
	sc, err := world.ChooseScenario(cfg.Scenarios, cfg.Scenario)
	if err != nil {
		return err
	}
	cfg.Chosen = sc
	if b.afterChoice != nil {
		b.afterChoice()
	}
	return nil
}

// snapshot returns what builds the default world's start-up state from parsed
// fixtures, at start and on every reset.
func (b *Worlds) snapshot(files []*fixture.File, seed int64, start time.Time, edgeDomain string, form state.URLForm) func() (state.Snapshot, error) {
	fo := fixture.Options{Seed: seed, Start: start, EdgeDomain: edgeDomain, URLForm: form}
	return func() (state.Snapshot, error) {
		snap, problems := fixture.Build(files, fo)
		return snap, problemsError(problems)
	}
}

// namespaceSnapshot returns what makes a namespace's start-up state, at its start and
// on every reset: a clone of the template of key (built from files once), with the
// namespace's label in its deployment hosts and its own credentials in place of the
// fixtures'. It is the state fixture.Build makes with the edge domain
// <label>.<key.edge> (TestTemplateCloneIsBuild).
func (b *Worlds) namespaceSnapshot(files []*fixture.File, key templateKey, id Identity) func() (state.Snapshot, error) {
	build := func(edge string) (state.Snapshot, []fixture.Problem) {
		return fixture.Build(files, fixture.Options{Seed: key.seed, Start: key.start, EdgeDomain: edge, URLForm: key.form})
	}
	return func() (state.Snapshot, error) {
		t, kept, problems := b.templates.get(key, build)
		var snap state.Snapshot
		switch {
		case len(problems) > 0:
			return state.Snapshot{}, fieldProblems(problems, key.doc != "")
		case t == nil:
			if snap, problems = build(id.Label + "." + key.edge); len(problems) > 0 {
				return state.Snapshot{}, fieldProblems(problems, key.doc != "")
			}
		case kept:
			snap = t.clone(id.Label)
		default:
			snap = t.take(id.Label)
		}
		snap.Tokens = []state.Token{
			{Token: id.Tokens.Read, Scope: state.ScopeRead},
			{Token: id.Tokens.Deploy, Scope: state.ScopeDeploy},
			{Token: id.Tokens.Admin, Scope: state.ScopeAdmin},
		}
		snap.Cipher.APIKeys = []string{id.CipherKey}
		return snap, nil
	}
}

// fieldProblems is the error of a namespace's fixtures' problems, on one line as an
// API message is: each problem, which names its file (fixtures:line for inline ones, as
// a namespace's scenarios' name scenarios[i]:line), after `field "fixtures": ` when
// inline, the request's own field.
func fieldProblems(problems []fixture.Problem, inline bool) error {
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.String()
	}
	msg := strings.Join(msgs, "; ")
	if inline {
		msg = `field "fixtures": ` + msg
	}
	return errors.New(msg)
}

func problemsError(problems []fixture.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("fixtures:\n%w", problem.List(problems))
}
