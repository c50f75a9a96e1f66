// Package world is one emulated world: its state, clock and scheduler, active scenario,
// rate-limit counters, faults, request journal and decryption keys, kept in one object
// so that several isolated worlds can live in one process.
package world

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/envelope"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Config is what a world starts from.
type Config struct {
	Seed       int64
	ClockMode  clock.Mode
	ClockStart time.Time // zero: now, to the second
	// Fixtures builds the start-up state; Reset calls it again rather than keeping a
	// copy of a world that may hold 100,000 deployments. Each call must return a fresh
	// snapshot: loading takes its slices over.
	Fixtures      func() (state.Snapshot, error)
	Scenarios     *scenario.Registry
	Scenario      string // active scenario's name
	JournalSize   int
	RateLimitsOff bool
	Logger        *slog.Logger
}

// World is one emulated world. Its parts are safe for concurrent use.
type World struct {
	Clock   *clock.Clock
	Sched   *clock.Scheduler
	Store   *state.Store
	Limiter *ratelimit.Limiter
	Faults  *fault.Set
	Journal *journal.Journal
	Log     *slog.Logger

	scenarios     *scenario.Registry
	active        atomic.Pointer[scenario.Scenario]
	keyring       atomic.Pointer[envelope.Keyring]
	rateLimitsOff bool
	seed          int64

	// start-up world, restored by Reset
	fixtures      func() (state.Snapshot, error)
	startMode     clock.Mode
	startTime     time.Time
	startScenario string

	mu      sync.Mutex // guards rng, gens and nextGen
	rng     *rand.Rand
	gens    map[string]uint64 // lifecycle generation per resource ("dpl:id", "dom:host")
	nextGen uint64

	changes atomic.Uint64 // bumped on every state change (for --state saving and await)
}

// New builds a world and loads its fixtures. Call Start to run a real clock.
func New(cfg Config) (*World, error) {
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.ClockMode == "" {
		cfg.ClockMode = clock.Real
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Scenario == "" {
		cfg.Scenario = "default"
	}
	c := clock.New(cfg.ClockMode, cfg.ClockStart)
	w := &World{
		Clock:         c,
		Sched:         clock.NewScheduler(c),
		Store:         state.New(),
		Journal:       journal.New(cfg.JournalSize),
		Log:           cfg.Logger,
		scenarios:     cfg.Scenarios,
		rateLimitsOff: cfg.RateLimitsOff,
		seed:          cfg.Seed,
		fixtures:      cfg.Fixtures,
		startMode:     cfg.ClockMode,
		startTime:     c.Now(),
		startScenario: cfg.Scenario,
	}
	w.Sched.OnPanic = func(r any) { w.Log.Error("a scheduled transition panicked; it was skipped", "panic", r) }
	w.Faults = fault.NewSet(rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6661756c74)))
	sc, ok := w.scenarios.Get(cfg.Scenario)
	if !ok {
		return nil, fmt.Errorf("scenario %q not found", cfg.Scenario)
	}
	w.Limiter = ratelimit.New(w.limits(sc))
	w.setScenario(sc)
	w.reseed()
	snap, err := cfg.Fixtures()
	if err != nil {
		return nil, err
	}
	if err := w.load(snap); err != nil {
		return nil, err
	}
	return w, nil
}

// Start runs the scheduler's goroutine (it only fires on a real clock).
func (w *World) Start() { w.Sched.Start() }

// Close stops the scheduler.
func (w *World) Close() { w.Sched.Close() }

// Scenario is the active scenario.
func (w *World) Scenario() *scenario.Scenario { return w.active.Load() }

// Scenarios is the registry of known scenarios.
func (w *World) Scenarios() *scenario.Registry { return w.scenarios }

// Keyring is the decryption service's master keys.
func (w *World) Keyring() *envelope.Keyring { return w.keyring.Load() }

// Changes counts state changes; it only grows.
func (w *World) Changes() uint64 { return w.changes.Load() }

func (w *World) changed() { w.changes.Add(1) }

// UseScenario makes the named scenario active. Resources created from now on follow
// it; those in flight finish on the schedule they started with.
func (w *World) UseScenario(name string) error {
	sc, ok := w.scenarios.Get(name)
	if !ok {
		return state.Errorf(CodeScenarioNotFound, "scenario %q not found", name)
	}
	w.setScenario(sc)
	return nil
}

// RefreshScenario re-reads the active scenario from the registry after a reload.
func (w *World) RefreshScenario() {
	cur := w.Scenario()
	if sc, ok := w.scenarios.Get(cur.Name); ok && sc != cur {
		w.setScenario(sc)
	} else if !ok {
		w.Log.Warn("active scenario disappeared; keeping its last version", "scenario", cur.Name)
	}
}

func (w *World) setScenario(sc *scenario.Scenario) {
	w.active.Store(sc)
	w.Limiter.SetConfig(w.limits(sc))
	w.Faults.SetScenarioFaults(sc.Name, sc.Faults)
}

func (w *World) limits(sc *scenario.Scenario) ratelimit.Config {
	rl := sc.RateLimits
	return ratelimit.Config{
		Enabled:           rl.Enabled && !w.rateLimitsOff,
		PerTokenPerSecond: rl.PerTokenPerSecond,
		PerTokenPerMinute: rl.PerTokenPerMinute,
		PerIPPerSecond:    rl.PerIPPerSecond,
		Burst:             rl.Burst,
	}
}

// CodeScenarioNotFound is the error code for an unknown scenario name.
const CodeScenarioNotFound = "scenario_not_found"

// load replaces the state with snap, rebuilds the keyring and restarts the lifecycles
// of resources in flight.
func (w *World) load(snap state.Snapshot) error {
	keys := make([]envelope.Key, len(snap.Cipher.MasterKeys))
	for i, k := range snap.Cipher.MasterKeys {
		keys[i] = envelope.Key{ID: k.ID, Secret: k.Key}
	}
	kr, err := envelope.NewKeyring(keys)
	if err != nil {
		return fmt.Errorf("cipher.master_keys: %w", err)
	}
	if err := w.Store.Load(snap); err != nil {
		return err
	}
	w.keyring.Store(kr)
	w.Sched.Clear()
	w.mu.Lock()
	w.gens = map[string]uint64{}
	w.mu.Unlock()
	w.resume()
	w.changed()
	return nil
}

// Import replaces the whole state (PUT /_emulator/state); a bad snapshot changes nothing.
func (w *World) Import(snap state.Snapshot) error { return w.load(snap) }

// Reset returns the world to its start: fixtures, start-up scenario, no API faults, an
// empty journal, fresh rate-limit counters, and a manual clock back at its start.
func (w *World) Reset() error {
	snap, err := w.fixtures()
	if err != nil {
		return err // nothing changed
	}
	w.Clock.Reset() // rewinds a manual clock only
	if sc, ok := w.scenarios.Get(w.startScenario); ok {
		w.setScenario(sc)
	}
	w.Faults.Reset()
	w.Journal.Clear()
	w.Limiter.Reset()
	w.reseed()
	err = w.load(snap)
	w.Sched.Wake()
	return err
}

// reseed restarts the id source, so that the same requests after a start or a reset
// get the same ids. Loading a state does not: its ids would come again.
func (w *World) reseed() {
	w.mu.Lock()
	w.rng = rand.New(rand.NewPCG(uint64(w.seed), 0x686f7374656d75))
	w.mu.Unlock()
}

// newID returns prefix + 20 letters and digits from the world's seeded source.
func (w *World) newID(prefix string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, len(prefix)+20)
	copy(b, prefix)
	w.mu.Lock()
	for i := len(prefix); i < len(b); i++ {
		b[i] = alphabet[w.rng.IntN(len(alphabet))]
	}
	w.mu.Unlock()
	return string(b)
}

// MintToken creates a new hosting token of scope.
func (w *World) MintToken(scope state.Scope) state.Token {
	t := state.Token{Token: "hostemu_" + string(scope) + "_" + w.newID(""), Scope: scope}
	for w.Store.HasToken(t.Token) { // an imported state may hold what the source gives
		t.Token = "hostemu_" + string(scope) + "_" + w.newID("")
	}
	w.Store.AddToken(t)
	w.changed()
	return t
}
