package world

import (
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Recording is what a failure bundle holds of a world besides its state: enough that
// a world restored from it answers and moves on exactly as the original would have.
type Recording struct {
	Seed       int64
	ClockMode  clock.Mode
	Now        time.Time
	ClockStart time.Time // a manual or auto clock's start; zero for a running one
	Scenario   *scenario.Scenario
	Faults     fault.Saved
	Journal    []journal.Entry
	Events     []events.Recorded
	// Lifecycles are when each lifecycle in flight entered its current step, by key
	// ("dpl:<id>", "dom:<hostname>", "crt:<hostname>").
	Lifecycles map[string]time.Time
	// IDDice is the position of the id source.
	IDDice []byte
	// Coverage is the world's coverage, counted again from it on a restore (nil: a
	// bundle that carries none, and the counts are let be).
	Coverage *coverage.Report
}

// ReplayInfo tells that a world was restored from a failure bundle, and which.
type ReplayInfo struct {
	CreatedAt      state.Timestamp `json:"created_at"`
	HostemuVersion string          `json:"hostemu_version"`
	Namespace      string          `json:"namespace"`
	// Failure is the message of the failed test the bundle was written for
	// (failure.txt), "" when it carries none.
	Failure string `json:"failure,omitempty"`
	// Label is Namespace's label, in the hosts of the bundle's deployments: the world
	// answers for it as for its own (a namespace's bundle replayed elsewhere, whose
	// deployment URLs carry the label of a namespace this process never had).
	Label string `json:"-"`
}

// maxFailureLine bounds the failure's line a listing of many worlds carries.
const maxFailureLine = 200

// Brief is r with its failure cut to its first line (at most 200 bytes, on a rune's
// boundary): what a list of many worlds carries of each, the whole text being the
// world's own answer's and the bundle's. Nil stays nil.
func (r *ReplayInfo) Brief() *ReplayInfo {
	if r == nil {
		return nil
	}
	b := *r
	line, _, cut := strings.Cut(strings.TrimSpace(b.Failure), "\n")
	if len(line) > maxFailureLine {
		line, cut = line[:maxFailureLine], true
		for len(line) > 0 && !utf8.ValidString(line) {
			line = line[:len(line)-1]
		}
	}
	if cut {
		line += " …"
	}
	b.Failure = line
	return &b
}

// Seed is the world's seed.
func (w *World) Seed() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seed
}

// Replayed is the bundle the world was restored from, nil when it was not.
func (w *World) Replayed() *ReplayInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.replayed
}

// answersFor reports whether label, a deployment host's namespace label that is not the
// world's own, is the label of the namespace its bundle was taken in.
func (w *World) answersFor(label string) bool {
	r := w.Replayed()
	return label != "" && r != nil && r.Label == label
}

// Capture takes the world's state and recording at one moment: due transitions run
// first, and none runs while it is taken.
func (w *World) Capture() (state.Snapshot, Recording) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	w.fireDue()
	var snap state.Snapshot
	rec := Recording{Scenario: w.Scenario(), Events: w.events.History()}
	w.sched.Exclusive(func() {
		snap = w.store.Export()
		snap.Uploads = w.uploads()
		rec.Now = w.clock.Now()
		rec.ClockMode = w.clock.Mode()
		if mode, start := w.clock.Start(); mode.Stands() {
			rec.ClockStart = start
		}
		rec.Faults = w.faults.Save()
		rec.Journal = w.journal.List(journal.Filter{})
		w.mu.Lock()
		rec.Seed = w.seed
		rec.IDDice, _ = w.idSrc.MarshalBinary() // a PCG always marshals
		rec.Lifecycles = map[string]time.Time{}
		w.eachRun(func(r *run) { rec.Lifecycles[kindPrefix[r.kind]+r.name] = r.anchor })
		w.mu.Unlock()
	})
	return snap, rec
}

// CheckRecording validates rec without changing anything: what Restore would refuse,
// named.
func (w *World) CheckRecording(rec Recording) error {
	if rec.Scenario == nil {
		return apperr.New(apperr.InvalidRequest, "the bundle names no scenario")
	}
	if err := w.faults.Fits(len(rec.Faults.Faults) + len(rec.Scenario.Faults)); err != nil {
		return apperr.New(apperr.InvalidRequest, "faults.json: "+err.Error())
	}
	if err := w.faults.Check(rec.Faults); err != nil {
		return apperr.New(apperr.InvalidRequest, "faults.json: "+err.Error())
	}
	if err := journal.Check(rec.Journal); err != nil {
		return apperr.New(apperr.InvalidRequest, "journal.ndjson: "+err.Error())
	}
	if !state.InRange(rec.Now) {
		return apperr.Errorf(apperr.InvalidRequest, "manifest.json: clock.now %s is out of range", rec.Now.Format(time.RFC3339))
	}
	for key, at := range rec.Lifecycles {
		if !strings.HasPrefix(key, "dpl:") && !strings.HasPrefix(key, "dom:") && !strings.HasPrefix(key, "crt:") {
			return apperr.Errorf(apperr.InvalidRequest, "lifecycles.json: key %q is not dpl:<id>, dom:<hostname> or crt:<hostname>", key)
		}
		if !state.InRange(at) {
			return apperr.Errorf(apperr.InvalidRequest, "lifecycles.json: %s: %s is out of range", key, at.Format(time.RFC3339))
		}
	}
	if len(rec.IDDice) > 0 {
		var probe rand.PCG
		if err := probe.UnmarshalBinary(rec.IDDice); err != nil {
			return apperr.New(apperr.InvalidRequest, "manifest.json: dice.ids: "+err.Error())
		}
	}
	return nil
}

// Restore replaces the world with a bundle's: its seed, scenario, a manual clock at
// its now, its state with each lifecycle in flight resumed from when it entered its
// step, its faults with their hits and dice, its journal (marked replayed) and recent
// events, and the id source's position. A state that does not load changes nothing,
// nor does a world that would weigh more than --max-world-bytes allows (all it keeps
// is counted: see weigh.go); rec must have passed CheckRecording.
func (w *World) Restore(snap state.Snapshot, rec Recording, info ReplayInfo) error {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if err := snap.CheckKept(w.EdgeDomain()); err != nil {
		return apperr.New(apperr.InvalidRequest, "state.json is not valid: "+err.Error())
	}
	weight := snap.Weight()
	// A world that cannot fit whatever else the bundle brings (its state alone is too
	// heavy) is refused before the store's maps are built for it, with the error it
	// always had: the anchors it keeps found by a pass over the state instead.
	if w.fits(weight+w.carried, "") != nil {
		rest, evs := w.broughtWeight(&rec, keptByState(rec.Lifecycles, &snap))
		if err := w.fits(weight+rest+evs+w.carried, "the bundle's world"); err != nil {
			return err
		}
	}
	// The store is prepared for the state (checked and built aside, nothing changed)
	// before the anchors are kept: it finds the few anchors' resources in the maps it
	// built, where a pass over the state's 100,000 deployments took 10 ms on one core.
	// The world's weight is then known, and a world that would not fit is refused
	// before anything changes, as ever.
	prepared := w.store.Prepare(snap)
	anchors := keptAnchors(rec.Lifecycles, &snap, prepared)
	rest, evs := w.broughtWeight(&rec, anchors)
	if err := w.fits(weight+rest+evs+w.carried, "the bundle's world"); err != nil {
		return err
	}
	// the seed, scenario and clock change only once the state is in, and before the
	// lifecycles resume under them: a state that does not load changes nothing
	err := w.loadAnchored(snap, prepared, weight, anchors, func() {
		w.mu.Lock()
		w.seed = rec.Seed
		w.mu.Unlock()
		w.setScenario(rec.Scenario)
		if sc, ok := w.scenarios.Get(rec.Scenario.Name); !ok || string(sc.Raw) != string(rec.Scenario.Raw) {
			w.own.Store(rec.Scenario) // the bundle's own: a reload of the registry does not replace it
		}
		w.clock.Jump(rec.Now, rec.ClockMode) // in range: CheckRecording; an auto world stays auto
	})
	if err != nil {
		return apperr.New(apperr.InvalidRequest, "state.json is not valid: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	w.brought.Store(rest)
	w.broughtEvents.Store(evs)
	w.faults.Restore(rec.Faults)
	w.journal.Load(rec.Journal) // checked by CheckRecording
	w.events.LoadHistory(rec.Events)
	if rec.Coverage != nil {
		w.cov.Load(*rec.Coverage) // the dashboard reads it again on the reset event below
	}
	w.mu.Lock()
	if len(rec.IDDice) > 0 {
		w.idSrc.UnmarshalBinary(rec.IDDice)
	} else {
		w.idSrc.Seed(uint64(w.seed), 0x686f7374656d75)
	}
	w.replayed = &info
	w.mu.Unlock()
	w.sched.Wake()
	w.emit(EventReset, "replay")
	w.emitClock()
	w.emitScenario("switched")
	return nil
}

// JournalSize is how many entries the world's journal keeps (--journal-size): a bundle
// read for it keeps no more.
func (w *World) JournalSize() int { return w.journal.Size() }
