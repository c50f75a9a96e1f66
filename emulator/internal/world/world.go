// Package world is one emulated world: its state, clock and scheduler, active scenario,
// rate-limit counters, faults, request journal and decryption keys, kept in one object
// so that several isolated worlds can live in one process.
package world

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/envelope"
	"github.com/hostemu/hostemu/emulator/internal/events"
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
	ClockStart time.Time // zero: a real clock is the wall clock; a manual one starts now, to the second
	// AutoIdle is how long an auto clock's world must be idle before the clock jumps to
	// its next in-flight transition (clock.DefaultAutoIdle when 0).
	AutoIdle time.Duration
	// Fixtures builds the start-up state; Reset calls it again rather than keeping a
	// copy of a world that may hold 100,000 deployments. Each call must return a fresh
	// snapshot: loading takes its slices over.
	Fixtures func() (state.Snapshot, error)
	// EdgeDomain is the domain deployment URLs live under ("" is
	// state.DefaultEdgeDomain).
	EdgeDomain string
	// URLForm is the scheme and port of deployment URLs (zero: https, no port).
	URLForm state.URLForm
	// FileStoreSize bounds the uploaded file contents kept for the edge, in bytes
	// (edge.DefaultFileStoreSize when 0).
	FileStoreSize int64
	// FileBudget, when set, bounds the uploaded contents of every world sharing it (the
	// default world and the namespaces) together.
	FileBudget *edge.Budget
	// Grow, when set, is asked before the world grows by an API call (a deployment, a
	// domain, a token, a file digest) by about delta bytes (state.WeightOf): an error
	// refuses the call (--max-world-bytes).
	Grow func(w *World, delta int64) error
	// MaxBytes is the most the world may weigh on its own (--max-world-bytes): an
	// import or a bundle over it is refused, 413, whatever else holds room. 0: no bound.
	MaxBytes int64
	// Carried is what the world holds for its whole life that its state does not
	// show (a namespace's own scenarios), counted in its Weight.
	Carried int64
	// MaxFaults bounds the faults the world holds, API-added and its scenario's
	// together (fault.DefaultMax when 0; --max-faults).
	MaxFaults int
	// Namespace is the world's namespace label (its id without "ns_"), "" for the
	// default world. Its deployment hosts carry it:
	// <slug>-<suffix>.<Namespace>.<EdgeDomain>.
	Namespace string
	// TokenPrefix starts every token minted in the world ("hostemu_" when empty): a
	// namespace's tokens name it, so a request finds its world without a lookup table.
	TokenPrefix string
	Scenarios   *scenario.Registry
	Scenario    string // active scenario's name
	// Chosen, when set, is the scenario Scenario names as its caller already chose it
	// (ChooseScenario): New starts on it rather than asking Scenarios again, so that a
	// file deleted or broken between the caller's check and New cannot turn the
	// caller's answer (a namespace's creation, TestScenarioGoneBetweenChecks).
	Chosen        *scenario.Scenario
	JournalSize   int
	RateLimitsOff bool
	Logger        *slog.Logger
}

// World is one emulated world. It is safe for concurrent use, and it keeps its own
// rules: callers reach its parts only through its methods, which run due transitions
// before they read, count changes where they happen, and check every value they take.
type World struct {
	// weight estimates the memory the world's state takes (state.Snapshot.Weight at a
	// load, plus what API calls added since); grow is Config.Grow.
	weight atomic.Int64
	grow   func(w *World, delta int64) error
	// brought is what the last bundle restored brought besides its state (lifecycle
	// anchors, journal, faults, its scenario's source), given back by a reset (an
	// import keeps the journal and faults, so it keeps the count); broughtEvents its
	// events, which the world remembers until newer ones push them out (given back by
	// the next bundle); carried is Config.Carried.
	brought, broughtEvents atomic.Int64
	carried                int64
	maxBytes               int64

	clock   *clock.Clock
	sched   *clock.Scheduler
	store   *state.Store
	limiter *ratelimit.Limiter
	faults  *fault.Set
	journal *journal.Journal
	cov     *coverage.Counter // what the world's clients exercised (GET /_emulator/coverage)
	files   *edge.FileStore   // uploaded contents, served by the edge
	events  *events.Hub       // changes, for GET /_emulator/events (events.go)
	log     *slog.Logger

	edgeDomain  string
	urlForm     state.URLForm
	namespace   string // label; "" for the default world
	tokenPrefix string

	// clockMu serializes what moves or switches the clock (advance, set, a manual
	// await, reset, import), so overlapping control calls never fail or lose a
	// transition.
	clockMu sync.Mutex
	// waitedUntil is the latest Retry-After instant an auto clock was told to jump to
	// (Unix nanoseconds; WaitedOn).
	waitedUntil atomic.Int64

	scenarios     *scenario.Registry
	active        atomic.Pointer[scenario.Scenario]
	keyring       atomic.Pointer[envelope.Keyring]
	rateLimitsOff bool
	seed          int64                        // changed only by a bundle's replay, under clockMu and mu
	changeLog     atomic.Pointer[changeLogBox] // set by SetChangeLog (--state)
	// own is the active scenario while it is a bundle's own, its source not the
	// registry's of its name (Restore); nil otherwise. A reload of the registry leaves
	// it in force (RefreshScenario): the replay runs on the scenario it was taken with.
	// Whatever makes another scenario active ends it (setScenario).
	own atomic.Pointer[scenario.Scenario]

	// start-up world, restored by Reset
	fixtures      func() (state.Snapshot, error)
	startScenario string

	mu sync.Mutex // guards seed (written), rng, idSrc, runs and their anchors, and replayed
	// replayed tells the world came from a failure bundle (PUT /_emulator/bundle, hostemu
	// replay): nil otherwise.
	replayed *ReplayInfo
	rng      *rand.Rand
	idSrc    *rand.PCG // rng's source, whose position a failure bundle saves
	// runs are the lifecycles in flight of domains and certificates, by kind and name
	// (a deployment's are found through the scheduler: lifecycle.go).
	runs [kinds]map[string]*run
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
	if cfg.TokenPrefix == "" {
		cfg.TokenPrefix = "hostemu_"
	}
	c := clock.New(cfg.ClockMode, cfg.ClockStart)
	w := &World{
		clock:         c,
		sched:         clock.NewScheduler(c),
		store:         state.New(),
		journal:       journal.New(cfg.JournalSize),
		cov:           coverage.NewCounter(nil),
		files:         edge.NewSharedFileStore(cfg.FileStoreSize, cfg.FileBudget),
		grow:          cfg.Grow,
		carried:       max(cfg.Carried, 0),
		maxBytes:      cfg.MaxBytes,
		events:        events.NewHubKeeping(0, RecentEvents, EventDeployment, EventDomain, EventJournal, EventFault, EventClock, EventScenario, EventToken, EventReset),
		edgeDomain:    cfg.EdgeDomain,
		urlForm:       cfg.URLForm,
		namespace:     cfg.Namespace,
		tokenPrefix:   cfg.TokenPrefix,
		log:           cfg.Logger,
		scenarios:     cfg.Scenarios,
		rateLimitsOff: cfg.RateLimitsOff,
		seed:          cfg.Seed,
		fixtures:      cfg.Fixtures,
		startScenario: cfg.Scenario,
	}
	w.sched.OnPanic = func(r any) { w.log.Error("a scheduled transition panicked; it was skipped", "panic", r) }
	w.sched.AutoIdle = cfg.AutoIdle
	w.sched.AutoAdvance = w.autoAdvance
	w.faults = fault.NewSetWithDice(w.faultDice())
	w.faults.SetClock(w.clock.Now) // fault windows are read on the emulator's clock
	w.faults.SetMax(cfg.MaxFaults)
	sc := cfg.Chosen
	if sc == nil {
		var err error
		if sc, err = ChooseScenario(w.scenarios, cfg.Scenario); err != nil {
			e, ok := apperr.As(err)
			if !ok {
				return nil, err // a broken built-in: internal, not a refusal
			}
			return nil, &ScenarioRefusal{Err: e}
		}
	}
	if err := w.faults.Fits(len(sc.Faults)); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	w.limiter = ratelimit.New(w.limits(sc))
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

// Start runs the scheduler's goroutine (it fires on a real or scaled clock, and moves an
// auto one).
func (w *World) Start() { w.sched.Start() }

// Close stops the scheduler.
func (w *World) Close() {
	w.sched.Close()
	w.events.Close()
	w.files.Release() // its bytes go back to a shared budget; the contents stay for a last save
}

// Scenario is the active scenario.
func (w *World) Scenario() *scenario.Scenario { return w.active.Load() }

// Scenarios is the registry of known scenarios.
func (w *World) Scenarios() *scenario.Registry { return w.scenarios }

// Changes counts state changes; it only grows.
func (w *World) Changes() uint64 { return w.store.Changes() }

// UseScenario makes the named scenario active. Resources created from now on follow
// it; those in flight finish on the schedule they started with.
func (w *World) UseScenario(name *string) error {
	if name == nil {
		return apperr.New(apperr.InvalidRequest, `field "name" is required`)
	}
	sc, err := ChooseScenario(w.scenarios, *name)
	if e, _ := apperr.As(err); e != nil && e.Code == apperr.ScenarioNotFound && *name == w.Scenario().Name {
		return apperr.Errorf(apperr.ScenarioNotFound, "scenario %q was deleted (its file is gone); it stays active in its last version until another is chosen", *name)
	}
	if err != nil {
		return err
	}
	if err := w.faults.Fits(len(sc.Faults) + w.faults.Added()); err != nil {
		return apperr.Errorf(apperr.InvalidRequest, "scenario %q: %v", sc.Name, err)
	}
	w.setScenario(sc)
	w.emitScenario("switched")
	return nil
}

// RefreshScenario re-reads the active scenario from the registry after a reload.
// A bundle's own scenario (World.own) is not the registry's, and stays.
func (w *World) RefreshScenario() {
	cur := w.Scenario()
	sc, ok := w.scenarios.Get(cur.Name)
	switch {
	case cur == w.own.Load():
		// a bundle's own: the registry's version of its name is not what the replay runs
	case ok && sc != cur:
		if err := w.faults.Fits(len(sc.Faults) + w.faults.Added()); err != nil {
			w.log.Warn("the active scenario's new version has too many faults; keeping its last version", "scenario", cur.Name, "err", err)
			return
		}
		w.setScenario(sc)
	case !ok:
		w.log.Warn("active scenario disappeared; keeping its last version", "scenario", cur.Name)
	}
	w.emitScenario("reloaded")
}

// setScenario makes sc active: the registry's (a bundle's own is made so by
// Restore, after it).
func (w *World) setScenario(sc *scenario.Scenario) {
	w.own.Store(nil)
	w.active.Store(sc)
	w.limiter.SetConfig(w.limits(sc))
	w.faults.SetScenarioFaults(sc.Name, sc.Faults)
}

func (w *World) limits(sc *scenario.Scenario) ratelimit.Config {
	rl := sc.RateLimits
	return ratelimit.Config{
		Enabled:           rl.Enabled && !w.rateLimitsOff,
		PerTokenPerSecond: rl.PerTokenPerSecond,
		PerTokenPerMinute: rl.PerTokenPerMinute,
		PerIPPerSecond:    rl.PerIPPerSecond,
		Burst:             rl.Burst,
		PerScope:          perScope(rl.PerScope),
	}
}

// perScope is a scenario's rate_limits.per_scope in the limiter's terms.
func perScope(ps map[string]scenario.ScopeRate) map[string]ratelimit.ScopeLimits {
	if len(ps) == 0 {
		return nil
	}
	out := make(map[string]ratelimit.ScopeLimits, len(ps))
	for scope, r := range ps {
		out[scope] = ratelimit.ScopeLimits{PerSecond: r.PerSecond, PerMinute: r.PerMinute}
	}
	return out
}

// load replaces the state with snap, rebuilds the keyring and restarts the lifecycles
// of resources in flight.
func (w *World) load(snap state.Snapshot) error {
	return w.loadAnchored(snap, nil, snap.Weight(), nil, nil)
}

// loadAnchored is load resuming each lifecycle in flight from its anchor in anchors
// (when it entered its current step), else from now. then, when set, runs once the
// state is in, before the lifecycles are resumed, with no transition in between (a
// bundle's seed, scenario and clock): a state that does not load changes nothing, then
// included. weight is snap.Weight(), which the caller has weighed already. prepared,
// when not nil, is snap as the world's store prepared it (state.Store.Prepare): it is
// committed rather than snap loaded.
func (w *World) loadAnchored(snap state.Snapshot, prepared *state.Prepared, weight int64, anchors map[string]time.Time, then func()) error {
	keys := make([]envelope.Key, len(snap.Cipher.MasterKeys))
	for i, k := range snap.Cipher.MasterKeys {
		keys[i] = envelope.Key{ID: k.ID, Secret: k.Key}
	}
	kr, err := envelope.NewKeyring(keys)
	if err != nil {
		return fmt.Errorf("cipher.master_keys: %w", err)
	}
	uploads := make(map[string][]byte, len(snap.Uploads))
	for _, u := range snap.Uploads {
		uploads[u.Digest] = u.Content
	}
	// no scheduled transition may fire between the old state and the new one: one
	// already under way would land on the state just loaded
	w.sched.Exclusive(func() {
		previous := w.files.Snapshot()
		if err = w.files.Load(uploads); err != nil { // changes nothing on error
			err = fmt.Errorf("uploads: %w", err)
			return
		}
		if prepared == nil {
			err = w.store.Load(snap)
		} else {
			err = w.store.Commit(prepared)
		}
		if err != nil {
			w.files.Load(previous)
			return
		}
		w.keyring.Store(kr)
		w.weight.Store(weight)
		if then != nil {
			then()
		}
		w.sched.Clear()
		w.waitedUntil.Store(0)
		w.mu.Lock()
		w.runs = newRuns()
		w.mu.Unlock()
		w.resume(anchors)
	})
	return err
}

// Weight estimates the memory the world takes, in bytes: its state (see
// state.WeightOf), and what a bundle or its namespace brought besides (weigh.go).
func (w *World) Weight() int64 {
	return w.weight.Load() + w.brought.Load() + w.broughtEvents.Load() + w.carried
}

// charge asks Config.Grow whether the world may grow by delta bytes, and counts them.
func (w *World) charge(delta int64) error {
	if w.grow != nil {
		if err := w.grow(w, delta); err != nil {
			return err
		}
	}
	w.weight.Add(delta)
	return nil
}

// Import replaces the whole state (PUT /_emulator/state); a bad snapshot changes
// nothing and is invalid_request with every problem named.
func (w *World) Import(snap state.Snapshot) error { return w.ImportWeighed(snap, -1) }

// ImportWeighed is Import of a snapshot whose weight CheckImport gave (-1: not weighed
// yet), so that a big state is weighed once.
func (w *World) ImportWeighed(snap state.Snapshot, weight int64) error {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if err := snap.CheckKept(w.EdgeDomain()); err != nil {
		return apperr.New(apperr.InvalidRequest, "the state is not valid: "+err.Error())
	}
	if weight < 0 {
		weight = snap.Weight()
	}
	if err := w.loadAnchored(snap, nil, weight, nil, nil); err != nil {
		return apperr.New(apperr.InvalidRequest, "the state is not valid: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	w.emit(EventReset, "import")
	return nil
}

// Reset returns the world to its start: fixtures, start-up scenario, no API faults, an
// empty journal, fresh rate-limit counters, and a manual clock back at its start.
func (w *World) Reset() error {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	snap, err := w.fixtures()
	if err != nil {
		return err // nothing changed
	}
	w.clock.Reset() // rewinds a manual clock only
	if sc, ok := w.scenarios.Get(w.startScenario); ok {
		w.setScenario(sc)
	}
	w.faults.ResetWithDice(w.faultDice())
	w.journal.Reset()
	w.files.Reset()
	w.limiter.Reset()
	w.reseed()
	err = w.load(snap)
	if err == nil {
		w.brought.Store(0) // the bundle's journal, faults and scenario are gone
	}
	w.sched.Wake()
	w.emit(EventReset, "reset")
	return err
}

// faultDice is the seeded source the faults draw probabilities and delays from, the same
// at the start and after every reset.
func (w *World) faultDice() *rand.PCG { return rand.NewPCG(uint64(w.seed), 0x6661756c74) }

// reseed restarts the id source, so that the same requests after a start or a reset
// get the same ids. Loading a state does not: its ids would come again.
func (w *World) reseed() {
	w.mu.Lock()
	w.idSrc = rand.NewPCG(uint64(w.seed), 0x686f7374656d75)
	w.rng = rand.New(w.idSrc)
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
