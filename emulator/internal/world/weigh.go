package world

import (
	"encoding/json"
	"strings"
	"time"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// What a world holds besides its state is charged to --max-world-bytes as well (issue
// 32): a failure bundle brings lifecycle anchors, events, faults, a journal and a
// scenario's source, a namespace its own scenarios. The costs below are what each
// takes beyond its bytes of text.
const (
	// weighAnchor is a lifecycle anchor's map entry: its key's header, its time and
	// the map's overhead.
	weighAnchor = 64 + int64(unsafe.Sizeof(time.Time{}))
	// weighEvent is a remembered event's header: the Recorded and its raw data's.
	weighEvent = int64(unsafe.Sizeof(events.Recorded{})) + 24
	// weighParsed is how many times its text a scenario's source costs once kept: the
	// text, and what it parses to.
	weighParsed = 3
)

// broughtWeight is what a bundle's recording weighs once a world holds it, besides
// its state: the lifecycle anchors kept (those of the state's resources, see
// keptAnchors), the events and journal entries kept, the faults, and the scenario's
// source when it is the bundle's own. events is the events' part, which a reset does not
// give back (the world keeps remembering them until newer ones push them out).
func (w *World) broughtWeight(rec *Recording, anchors map[string]time.Time) (rest, evs int64) {
	for key := range anchors {
		rest += weighAnchor + int64(len(key))
	}
	recent := rec.Events
	if len(recent) > RecentEvents {
		recent = recent[len(recent)-RecentEvents:]
	}
	for _, e := range recent {
		evs += weighEvent + int64(len(e.Type))
		switch d := e.Data.(type) {
		case json.RawMessage:
			evs += int64(len(d))
		case []byte:
			evs += int64(len(d))
		case string:
			evs += int64(len(d))
		default:
			evs += state.WeightOf(nil) // a world's own: small
		}
	}
	journal := rec.Journal
	if n := w.journal.Size(); len(journal) > n {
		journal = journal[len(journal)-n:]
	}
	for i := range journal {
		rest += journal[i].Bytes()
	}
	if text, err := json.Marshal(rec.Faults); err == nil {
		rest += 2 * int64(len(text)) // the specs, and what the set builds of them
	}
	if sc := rec.Scenario; sc != nil {
		if known, ok := w.scenarios.Get(sc.Name); !ok || known != sc {
			rest += weighParsed * int64(len(sc.Raw))
		}
	}
	return rest, evs
}

// keptAnchors is the part of a bundle's lifecycle anchors a world restored from it
// keeps: those of the state's deployments and domains. Any other key (a resource the
// state does not hold) would never be resumed nor forgotten, so it is dropped here
// rather than held for the world's life. p is snap as the world's store prepared it:
// a few anchors are looked up there (a pass over a replay's 100,000 deployments took
// 10 ms on one core), many (more than the state's resources) the other way round.
func keptAnchors(lifecycles map[string]time.Time, snap *state.Snapshot, p *state.Prepared) map[string]time.Time {
	if len(lifecycles) > len(snap.Deployments)+2*len(snap.Domains) {
		return keptByState(lifecycles, snap)
	}
	return keptByLookup(lifecycles, p)
}

// keptByLookup is keptAnchors by a lookup of each anchor's resource in p.
func keptByLookup(lifecycles map[string]time.Time, p *state.Prepared) map[string]time.Time {
	kept := map[string]time.Time{}
	for key, at := range lifecycles {
		if name, ok := strings.CutPrefix(key, kindPrefix[kindDeployment]); ok && p.HasDeployment(name) {
			kept[key] = at
			continue
		}
		for _, k := range []int{kindDomain, kindCert} {
			if name, ok := strings.CutPrefix(key, kindPrefix[k]); ok && p.HasDomain(name) {
				kept[key] = at
			}
		}
	}
	return kept
}

// keptByState is keptAnchors by a lookup of each of the state's resources among the
// anchors.
func keptByState(lifecycles map[string]time.Time, snap *state.Snapshot) map[string]time.Time {
	kept := map[string]time.Time{}
	if len(lifecycles) == 0 {
		return kept
	}
	// each key is made in one buffer and looked up without a string of its own
	var buf []byte
	take := func(k int, id string) {
		buf = append(append(buf[:0], kindPrefix[k]...), id...)
		if at, ok := lifecycles[string(buf)]; ok {
			kept[string(buf)] = at
		}
	}
	for i := range snap.Deployments {
		take(kindDeployment, snap.Deployments[i].ID)
	}
	for i := range snap.Domains {
		take(kindDomain, snap.Domains[i].Hostname)
		take(kindCert, snap.Domains[i].Hostname)
	}
	return kept
}

// fits says whether the world may be replaced by one weighing weight (an import, a
// bundle): 413 payload_too_large naming --max-world-bytes when weight alone is over it
// (it can never fit), else Config.Grow's answer for the difference (507 storage_full
// while other namespaces hold the room).
func (w *World) fits(weight int64, what string) error {
	if w.maxBytes > 0 && weight > w.maxBytes {
		return apperr.Errorf(apperr.PayloadTooLarge, "%s weighs about %d bytes once held (its state, lifecycle anchors, events, faults, journal and scenario), over the %d --max-world-bytes allows a world: nothing changed", what, weight, w.maxBytes)
	}
	if delta := weight - w.Weight(); delta > 0 && w.grow != nil {
		return w.grow(w, delta)
	}
	return nil
}

// CheckImport says whether the world may take snap in place of its state (PUT
// /_emulator/state): what it holds besides its state stays, and is counted. It gives
// snap's weight, for ImportWeighed not to weigh it again.
func (w *World) CheckImport(snap *state.Snapshot) (weight int64, err error) {
	weight = snap.Weight()
	return weight, w.fits(weight+w.brought.Load()+w.broughtEvents.Load()+w.carried, "the state")
}
