package fault

import (
	"encoding"
	"fmt"
	"math/rand/v2"
	"time"
)

// Dice is a random source whose position can be saved and restored (a *rand.PCG): a
// failure bundle carries it, so that probability faults fire after a replay as they
// would have in the original world.
type Dice interface {
	rand.Source
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// NewSetWithDice is NewSet drawing from d, whose position Save records.
func NewSetWithDice(d Dice) *Set {
	s := NewSet(rand.New(d))
	s.dice = d
	return s
}

// ResetWithDice is Reset drawing from d from now on.
func (s *Set) ResetWithDice(d Dice) {
	s.Reset(rand.New(d))
	s.mu.Lock()
	s.dice = d
	s.mu.Unlock()
}

// Saved is a Set's whole state: every API-added fault with its hits and the matches
// counted towards after, the scenario faults' counts, the next id and the dice.
type Saved struct {
	Faults   []SavedFault `json:"faults"`
	Scenario []SavedCount `json:"scenario_faults"`
	Next     int          `json:"next_id"`
	Dice     []byte       `json:"dice,omitempty"` // the dice's position (base64 in JSON)
}

// SavedFault is an API-added fault as saved: the fault object of GET /_emulator/faults
// (its spec's fields, id, source, hits) plus what decides when it fires next.
type SavedFault struct {
	Spec
	ID      string    `json:"id"`
	Source  string    `json:"source"`
	Hits    int64     `json:"hits"`
	Matched int64     `json:"matched"`
	Since   time.Time `json:"since"`
	// Remaining is how many more times it fires (times − hits), null when unlimited.
	Remaining *int64 `json:"remaining"`
}

// SavedCount is a scenario fault's counts.
type SavedCount struct {
	ID      string    `json:"id"`
	Hits    int64     `json:"hits"`
	Matched int64     `json:"matched"`
	Since   time.Time `json:"since"`
}

// Save records the set's state.
func (s *Set) Save() Saved {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Saved{Faults: make([]SavedFault, 0, len(s.api)), Scenario: make([]SavedCount, 0, len(s.scenario)), Next: s.next}
	for _, f := range s.api {
		sf := SavedFault{Spec: f.Spec.Clone(), ID: f.ID, Source: f.Source, Hits: f.Hits, Matched: f.matched, Since: f.since.UTC()}
		if f.Spec.Times > 0 {
			r := max(int64(f.Spec.Times)-f.Hits, 0)
			sf.Remaining = &r
		}
		out.Faults = append(out.Faults, sf)
	}
	for _, f := range s.scenario {
		out.Scenario = append(out.Scenario, SavedCount{ID: f.ID, Hits: f.Hits, Matched: f.matched, Since: f.since.UTC()})
	}
	if s.dice != nil {
		out.Dice, _ = s.dice.MarshalBinary() // a PCG always marshals
	}
	return out
}

// Check validates sv without changing anything: every fault's spec, ids of the API's
// form, unique, below Next, and dice the set can take.
func (s *Set) Check(sv Saved) error {
	seen := map[string]bool{}
	for i, f := range sv.Faults {
		if err := f.Spec.Validate(); err != nil {
			return fmt.Errorf("fault %d (%s): %w", i+1, f.ID, err)
		}
		var n int
		if _, err := fmt.Sscanf(f.ID, "flt_%d", &n); err != nil || fmt.Sprintf("flt_%d", n) != f.ID || n < 1 {
			return fmt.Errorf("fault %d: id %q is not an API fault's id (flt_<n>)", i+1, f.ID)
		}
		if seen[f.ID] {
			return fmt.Errorf("fault %d: id %q twice", i+1, f.ID)
		}
		seen[f.ID] = true
		if n >= sv.Next {
			return fmt.Errorf("fault %d: id %q is not below next_id %d", i+1, f.ID, sv.Next)
		}
		if f.Source != "api" {
			return fmt.Errorf("fault %d: source %q, want \"api\" (a scenario's faults come with the scenario)", i+1, f.Source)
		}
		if f.Hits < 0 || f.Matched < 0 {
			return fmt.Errorf("fault %d: negative counts", i+1)
		}
	}
	if sv.Next < 1 {
		return fmt.Errorf("next_id %d: want 1 or more", sv.Next)
	}
	if len(sv.Dice) > 0 {
		var probe rand.PCG
		if err := probe.UnmarshalBinary(sv.Dice); err != nil {
			return fmt.Errorf("dice: %w", err)
		}
	}
	return nil
}

// Restore replaces the API-added faults, the next id and the dice with sv's, and gives
// the scenario faults of the same ids their counts; sv must have passed Check.
func (s *Set) Restore(sv Saved) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.api = make([]*Fault, len(sv.Faults))
	for i, f := range sv.Faults {
		s.api[i] = &Fault{ID: f.ID, Spec: f.Spec.Clone(), Source: "api", Hits: f.Hits, matched: f.Matched, since: f.Since}
		s.api[i].compile()
	}
	s.next = sv.Next
	counts := map[string]SavedCount{}
	for _, c := range sv.Scenario {
		counts[c.ID] = c
	}
	for _, f := range s.scenario {
		if c, ok := counts[f.ID]; ok {
			f.Hits, f.matched, f.since = c.Hits, c.Matched, c.Since
		}
	}
	if len(sv.Dice) > 0 && s.dice != nil {
		s.dice.UnmarshalBinary(sv.Dice) // checked by Check
	}
	s.count()
}
