package world

import (
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// AddFault adds an API fault.
func (w *World) AddFault(spec fault.Spec) (fault.Fault, error) {
	f, err := w.faults.Add(spec)
	var many *fault.TooMany
	if errors.As(err, &many) {
		return fault.Fault{}, apperr.Errorf(apperr.InvalidRequest, "the world holds %d faults, the most --max-faults allows; delete one (DELETE /_emulator/faults/{id}) or reset", many.Max)
	}
	if err != nil {
		return fault.Fault{}, apperr.New(apperr.InvalidRequest, "fault: "+err.Error())
	}
	w.emitFault("added", f.ID, 0)
	return f, nil
}

// Faults lists the API-added faults and the active scenario's, with their hits.
func (w *World) Faults() []fault.Fault { return w.faults.List() }

// FaultByID is the fault id, API-added or the active scenario's, with its hits: 404
// fault_not_found when there is none (never added, removed, or gone with a reset).
func (w *World) FaultByID(id string) (fault.Fault, error) {
	f, ok := w.faults.Get(id)
	if !ok {
		return fault.Fault{}, apperr.Errorf(apperr.FaultNotFound, "no fault has id %q (never added, removed, or gone with a reset)", id)
	}
	return f, nil
}

// RemoveFault removes an API-added fault.
func (w *World) RemoveFault(id string) error {
	if !w.faults.Remove(id) {
		return apperr.Errorf(apperr.FaultNotFound, "no API-added fault has id %q", id)
	}
	w.emitFault("removed", id, 0)
	return nil
}

// ClearFaults removes every API-added fault.
func (w *World) ClearFaults() { w.faults.Clear(); w.emitFault("cleared", "", 0) }

// Requests lists the journal's entries f selects, oldest first.
func (w *World) Requests(f journal.Filter) []journal.Entry { return w.journal.List(f) }

// WriteRequests writes the journal's entries f selects as a JSON object
// {"requests":[…]}, entry by entry, so a big journal is never one big answer in memory.
func (w *World) WriteRequests(out io.Writer, f journal.Filter) error {
	return w.journal.WriteJSON(out, f)
}

// CheckCode refuses a journal query's or await's code (a filter already validated) that
// no answer of this world can carry — not the catalogue's, a status's, dropped or
// timeout, a code of one of its faults, or one its journal holds — naming the closest:
// a typo must not make an await wait for nothing, nor a query find nothing.
func (w *World) CheckCode(code string) error {
	if code == "" || slices.Contains(apperr.AnswerCodes(), code) {
		return nil
	}
	faults := w.faults.Codes()
	if slices.Contains(faults, code) {
		return nil // the journal, which may hold many entries, not walked
	}
	held := w.journal.Codes()
	if slices.Contains(held, code) {
		return nil
	}
	return journal.UnknownCode(code, append(faults, held...))
}

// ClearRequests empties the journal.
func (w *World) ClearRequests() { w.journal.Clear(); w.emit(EventJournal, "cleared") }

// MintToken creates a hosting token of a scope ("read", "deploy" or "admin"). Its value
// comes from crypto/rand, never from the world's seeded source: a client that sees ids
// must not be able to predict a token.
func (w *World) MintToken(scope *string) (state.Token, error) {
	if scope == nil {
		return state.Token{}, apperr.New(apperr.InvalidRequest, `field "scope" is required: read, deploy or admin`)
	}
	sc, ok := state.ParseScope(*scope)
	if !ok {
		return state.Token{}, apperr.Errorf(apperr.InvalidRequest, `field "scope" must be read, deploy or admin, not %q%s`, *scope, yamlcheck.DidYouMean(*scope, state.Scopes))
	}
	t := state.Token{Token: w.tokenPrefix + string(sc) + "_" + strings.ToLower(rand.Text()), Scope: sc}
	if err := w.charge(state.WeightOf(&t)); err != nil {
		return state.Token{}, err
	}
	w.store.AddToken(t)
	w.emitToken("minted", sc)
	return t, nil
}

// RevokeToken removes a hosting token; its requests are 401 from now on.
func (w *World) RevokeToken(token string) error {
	if !w.store.RevokeToken(token) {
		return apperr.New(apperr.TokenNotFound, "no such hosting token")
	}
	w.emitToken("revoked", "")
	return nil
}

// ScenarioList is the known scenarios, the active one, and the problems of scenario
// files that did not load.
type ScenarioList struct {
	Active    string
	Scenarios []scenario.Info
	Problems  []scenario.Problem
}

// ListScenarios returns the scenarios the world knows.
func (w *World) ListScenarios() ScenarioList {
	cur := w.Scenario()
	list := w.scenarios.List()
	if w.ActiveDeleted() {
		list = append(list, scenario.Info{Name: cur.Name, Description: cur.Description, Source: cur.Source, Deleted: true})
		slices.SortFunc(list, func(a, b scenario.Info) int { return strings.Compare(a.Name, b.Name) })
	}
	return ScenarioList{Active: cur.Name, Scenarios: list, Problems: w.scenarios.Problems()}
}

// ActiveDeleted reports whether the active scenario's file is gone from the registry
// (it stays active in its last version).
func (w *World) ActiveDeleted() bool {
	_, ok := w.scenarios.Get(w.Scenario().Name)
	return !ok
}
