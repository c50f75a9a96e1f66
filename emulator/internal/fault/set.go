package fault

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// Fault is a snapshot of one fault held by a [Set], as the control API lists it.
type Fault struct {
	// ID names the fault: "flt_<n>" when added through the API, "scn_<scenario>_<i>"
	// when it comes from the active scenario.
	ID string
	// Spec is the fault as written.
	Spec Spec
	// Source is "api" or "scenario:<name>".
	Source string
	// Hits counts the times it fired.
	Hits int64

	m       *matcher  // Spec.Match compiled
	answer  *Step     // Spec's answer fields (compile)
	matched int64     // the requests it matched (after skips the first ones)
	since   time.Time // when it was activated: added, or its scenario made active or reset
}

// compile readies a fault made from a valid spec for matching: its match compiled, its
// answer taken apart.
func (f *Fault) compile() {
	f.m, _ = compile(f.Spec.Match)
	a := f.Spec.answer()
	f.answer = &a
}

// MarshalJSON writes the fault object of GET /_emulator/faults: the spec's fields
// plus "id", "source" and "hits".
func (f Fault) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Spec
		ID     string `json:"id"`
		Source string `json:"source"`
		Hits   int64  `json:"hits"`
	}{f.Spec, f.ID, f.Source, f.Hits})
}

// Request is what faults match on.
type Request struct {
	Method  string // e.g. "POST"
	Path    string // without the query
	Service string // "hosting", "cipher" or "edge"
	Host    string // the edge's host (normalized); "" for the APIs
	Scope   string // the caller's token scope; empty when unauthenticated
	// RawQuery is the URL's query, parsed only when a fault asks for a parameter.
	RawQuery string
	// Header is the request's headers (canonical names), not copied.
	Header map[string][]string
	// Token is the caller's bearer token ("" without one).
	Token string
	// Body is the journal's copy of the request's body: set when Set.WantsBody said so.
	Body string

	query   map[string][]string // RawQuery parsed, once
	op      int                 // the operation's index in coverage.Default(), or -1 (once found)
	opSeen  bool
	doc     any // Body decoded, once (docRead)
	docOK   bool
	docRead bool
}

// Doc is the request's body decoded as JSON (numbers as written), once, whatever the
// number of body matches weighed on it; ok is false when it is not JSON.
func (r *Request) Doc() (any, bool) {
	if !r.docRead {
		r.docRead = true
		r.doc, r.docOK = DecodeBody(r.Body)
	}
	return r.doc, r.docOK
}

// operation is the index in coverage.Default() of r's operation, or -1: found by
// coverage's router from the method and path (faults are matched before routing, as
// coverage finds the operation of a request refused before it), once, and only when a
// fault that could hold names an operation.
func (r *Request) operation() int {
	if !r.opSeen {
		r.op, r.opSeen = coverage.Default().Op(r.Method, "", r.Path), true
	}
	return r.op
}

// Action is what a fault that fired makes the HTTP layer do. Delay applies with any of
// the others, before them or before the real answer.
type Action struct {
	// FaultID is the fault that fired, and Hits its firings counting this one.
	FaultID string
	Hits    int64
	// Status, when not 0, is the error status to answer. Code is empty when the spec
	// gave none: the HTTP layer then uses its catalogue's code for Status.
	Status  int
	Code    string
	Message string
	// Delay is drawn uniformly from the spec's range.
	Delay time.Duration
	// DelayEmulated says the delay is emulated time (delay_clock: emulated), not wall
	// time.
	DelayEmulated bool
	// Drop closes the connection without a response.
	Drop bool
	// RateLimit answers 429 as if the caller's limit were exhausted.
	RateLimit bool
	// RetryAfter, when not 0, is the rate_limit answer's Retry-After in seconds.
	RetryAfter int
	// Timeout holds the request until the client gives up (at most MaxTimeoutSeconds),
	// then drops it.
	Timeout bool
	// Error, when not "", is the documented error code to answer (Status is its
	// status).
	Error string
	// Shape, when not nil, changes the answer, real or injected: headers added, body
	// replaced. (A pointer keeps Action comparable.)
	Shape *Shape
	// Pass lets the request through: a then sequence's {"pass": true} step.
	Pass bool
	// Step, when not 0, is the number (from 1) of the then sequence's step this is.
	Step int
	// Break, when not "", is how the wire breaks (one of Breaks), with its AfterBytes
	// (truncate; 0: half the body) and BytesPerSecond (slow).
	Break          string
	AfterBytes     int
	BytesPerSecond int
}

// Shape is how a fault changes an answer it lets be written.
type Shape struct {
	Headers map[string]string // added to the answer
	Body    *Payload          // when not nil, replaces the answer's body
}

// Set holds the faults added through the control API and those of the active scenario,
// and decides which one fires for a request. It is safe for concurrent use.
type Set struct {
	// idx is where Match and WantsBody look for the faults that could match a request
	// (index.go): built anew, under mu, whenever the faults change, and read without a
	// lock; nil while the set holds no fault, the usual case.
	idx atomic.Pointer[index]

	mu       sync.Mutex       // guards rng, api, scenario, next, now and the faults' counts
	now      func() time.Time // the emulator's clock (SetClock)
	rng      *rand.Rand
	dice     Dice     // rng's source when its position can be saved (NewSetWithDice)
	api      []*Fault // in the order added
	scenario []*Fault
	next     int // sequence of the next API-added id
	max      int // faults held at most, API-added and the scenario's together (SetMax)
}

// DefaultMax is how many faults a Set holds at most when SetMax was not called: a
// request may meet each of those its index offers, and the index is built anew at each
// change, so their number is bounded (--max-faults).
const DefaultMax = 1000

// TooMany is the error of a set that would hold more than its maximum of faults.
type TooMany struct{ Max, Want int }

func (e *TooMany) Error() string {
	return fmt.Sprintf("%d faults would be held, over the maximum of %d a world holds (--max-faults)", e.Want, e.Max)
}

// SetMax bounds the faults the set holds, API-added and the scenario's together
// (DefaultMax when n <= 0).
func (s *Set) SetMax(n int) {
	if n <= 0 {
		n = DefaultMax
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max = n
}

// Max is how many faults the set holds at most.
func (s *Set) Max() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxLocked()
}

func (s *Set) maxLocked() int {
	if s.max <= 0 {
		return DefaultMax
	}
	return s.max
}

// Added is how many API-added faults the set holds.
func (s *Set) Added() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.api)
}

// Fits reports whether n faults are within the set's maximum: a *TooMany when not.
func (s *Set) Fits(n int) error {
	if max := s.Max(); n > max {
		return &TooMany{Max: max, Want: n}
	}
	return nil
}

// NewSet returns an empty Set drawing probabilities and delays from rng, which should
// be seeded per emulator and not be used elsewhere without the set: the set guards it
// with its own lock. A nil rng means a fixed seed.
func NewSet(rng *rand.Rand) *Set {
	if rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	return &Set{rng: rng, next: 1}
}

// Add validates spec and adds it after the other API-added faults, with the next id of
// the sequence flt_1, flt_2, ...
func (s *Set) Add(spec Spec) (Fault, error) {
	if err := spec.Validate(); err != nil {
		return Fault{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.api) + len(s.scenario) + 1; n > s.maxLocked() {
		return Fault{}, &TooMany{Max: s.maxLocked(), Want: n}
	}
	f := &Fault{ID: fmt.Sprintf("flt_%d", s.next), Spec: spec.Clone(), Source: "api", since: s.clock()}
	f.compile()
	s.next++
	s.api = append(s.api, f)
	s.count()
	return snapshot(f), nil
}

// Remove removes the API-added fault id, reporting whether there was one. Scenario
// faults cannot be removed, only replaced by switching scenario.
func (s *Set) Remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.api {
		if f.ID == id {
			s.api = append(s.api[:i:i], s.api[i+1:]...)
			s.count()
			return true
		}
	}
	return false
}

// Clear removes every API-added fault.
func (s *Set) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.api = nil
	s.count()
}

// SetClock gives the set the emulator's clock, which fault windows ("from", "until",
// "for") are read on; without one they are read on the wall clock.
func (s *Set) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

func (s *Set) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

// SetScenarioFaults replaces the scenario faults with specs, those of the scenario
// name, as ids scn_<name>_1, scn_<name>_2, ... with no hits. The specs are expected to
// be valid already: the scenario loader validates them with file and line.
func (s *Set) SetScenarioFaults(name string, specs []Spec) {
	faults := make([]*Fault, len(specs))
	for i, spec := range specs {
		faults[i] = &Fault{
			ID:     fmt.Sprintf("scn_%s_%d", name, i+1),
			Spec:   spec.Clone(),
			Source: "scenario:" + name,
			since:  s.clock(),
		}
		faults[i].compile()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenario = faults
	s.count()
}

// List returns a snapshot of every fault: the API-added ones in the order added, then
// the scenario's.
func (s *Set) List() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.api)+len(s.scenario))
	for f := range s.all() {
		out = append(out, snapshot(f))
	}
	return out
}

// all yields every fault, the API-added ones in the order added, then the scenario's;
// s.mu is held.
func (s *Set) all() iter.Seq[*Fault] {
	return func(yield func(*Fault) bool) {
		for _, list := range [...][]*Fault{s.api, s.scenario} {
			for _, f := range list {
				if !yield(f) {
					return
				}
			}
		}
	}
}

// Codes are the error codes the faults give of their own (a status with a code, in
// the fault or a step of its then sequence), distinct, in no order: codes beside the
// catalogue's that an answer may carry.
func (s *Set) Codes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var codes apperr.CodeSet
	for f := range s.all() {
		codes.Add(f.Spec.Code)
		for _, st := range f.Spec.Then {
			codes.Add(st.Code)
		}
	}
	return codes.List()
}

// Get returns a snapshot of the fault id, API-added or the active scenario's, as List
// shows it, and whether there is one.
func (s *Set) Get(id string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.all() {
		if f.ID == id {
			return snapshot(f), true
		}
	}
	return Fault{}, false
}

// Reset goes back to the start-up faults, as POST /_emulator/reset does: no API-added
// faults, the id sequence back to flt_1, the scenario's faults with no hits, and the
// dice drawn from rng, a source seeded as the one NewSet was given (nil keeps the
// current one): after a reset, probability faults fire as they did after the start.
func (s *Set) Reset(rng *rand.Rand) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rng != nil {
		s.rng, s.dice = rng, nil
	}
	s.api, s.next = nil, 1
	now := s.clock()
	for _, f := range s.scenario {
		f.Hits, f.matched, f.since = 0, 0, now
	}
	s.count()
}

// Match finds the first fault that fires for r, API-added faults first in the order
// added, then the scenario's, counts the hit and says what to do. A fault fires when
// every field of its match holds (method case-insensitively, path by [PathMatch],
// service and scope exactly; empty fields hold for every request), it has fired fewer
// than `times` times (0 is unlimited), and a draw passes its probability (absent is
// 1, 0 never fires; only probabilities strictly between draw). A fault that matches
// but does not fire leaves the request to the next one.
func (s *Set) Match(r Request) (Action, bool) {
	x := s.idx.Load()
	if x == nil {
		return Action{}, false
	}
	// Look without the lock: most requests match no fault. The first that holds is
	// then looked at again under the lock, from where the look stopped, unless the
	// faults changed in between: then from the start.
	bs := x.bucketsOf(&r, false)
	if bs.n == 0 {
		return Action{}, false
	}
	var c cursor
	if !bs.candidates(&r, &c) {
		return Action{}, false
	}
	for p := c.next(); p >= 0; p = c.next() {
		if m := &x.ms[p]; m.holds(&r) && bodyHolds(m, &r) {
			return s.matchFrom(x, &r, &c, p)
		}
	}
	return Action{}, false
}

// matchFrom goes on from the fault at position p of x, which holds for r, with the
// positions left in c: under the lock, the first of them that fires, fires.
func (s *Set) matchFrom(x *index, r *Request, c *cursor, p int32) (Action, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.idx.Load(); now != x {
		if x, c = now, new(cursor); x == nil {
			return Action{}, false
		}
		if bs := x.bucketsOf(r, false); !bs.candidates(r, c) {
			return Action{}, false
		}
		p = c.next()
	}
	for ; p >= 0; p = c.next() {
		if m := &x.ms[p]; m.holds(r) && bodyHolds(m, r) {
			if f := x.order[p]; s.fires(f) {
				f.Hits++
				return s.action(f), true
			}
		}
	}
	return Action{}, false
}

// WantsBody reports whether a fault with a body matcher matches r on every other field:
// only then does the HTTP layer read the body ahead of the handler (into the journal's
// copy, so it is read once) and ask Match again with Request.Body set. It takes no
// lock.
func (s *Set) WantsBody(r Request) bool {
	x := s.idx.Load()
	if x == nil || x.bodies == 0 {
		return false
	}
	bs := x.bucketsOf(&r, true)
	if bs.n == 0 {
		return false
	}
	var c cursor
	if !bs.candidates(&r, &c) {
		return false
	}
	for p := c.next(); p >= 0; p = c.next() {
		if m := &x.ms[p]; len(m.body) > 0 && m.holds(&r) {
			return true
		}
	}
	return false
}

// bodyHolds reports whether r's body holds every body match of c, decoded once for all
// of them and for every fault weighed on r.
func bodyHolds(c *matcher, r *Request) bool {
	if len(c.body) == 0 {
		return true
	}
	doc, ok := r.Doc()
	for _, b := range c.body {
		if !b.HoldsIn(doc, ok) {
			return false
		}
	}
	return true
}

// fires applies after, the time window, times and probability to a fault that matches.
func (s *Set) fires(f *Fault) bool {
	f.matched++
	if f.matched <= int64(f.Spec.After) {
		return false // after N: fire from the N+1th match
	}
	if sp := &f.Spec; !sp.From.IsZero() || !sp.Until.IsZero() || sp.For > 0 {
		now := s.clock()
		if (!sp.From.IsZero() && now.Before(sp.From)) || (!sp.Until.IsZero() && !now.Before(sp.Until)) ||
			(sp.For > 0 && !now.Before(f.since.Add(time.Duration(sp.For)))) {
			return false
		}
	}
	if f.Spec.Times > 0 && f.Hits >= int64(f.Spec.Times) {
		return false
	}
	if n := len(f.Spec.Then); n > 0 && f.Hits >= int64(n) {
		return false // spent
	}
	switch p := f.Spec.Probability; {
	case p == nil || *p >= 1:
		return true
	case !(*p > 0): // also NaN
		return false
	default:
		return s.rng.Float64() < *p
	}
}

// action is what f does on its firing number f.Hits (counted already): its answer, or
// its then sequence's step of that number.
func (s *Set) action(f *Fault) Action {
	sp := *f.answer
	step := 0
	if n := len(f.Spec.Then); n > 0 {
		step = min(int(f.Hits), n)
		sp = f.Spec.Then[step-1]
	}
	a := Action{
		FaultID:    f.ID,
		Hits:       f.Hits,
		Status:     sp.Status,
		Code:       sp.Code,
		Message:    sp.Message,
		Drop:       sp.Drop,
		RateLimit:  sp.RateLimit,
		RetryAfter: sp.RetryAfter,
		Timeout:    sp.Timeout,
		Error:      sp.Error,
		Pass:       sp.Pass,
		Step:       step,

		Break:          sp.Break,
		AfterBytes:     sp.AfterBytes,
		BytesPerSecond: sp.BytesPerSecond,
	}
	if sp.Headers != nil || sp.Body != nil {
		a.Shape = &Shape{Headers: sp.Headers, Body: sp.Body}
	}
	if sp.Error != "" {
		a.Status = apperr.Status(apperr.Code(sp.Error))
		a.Code = sp.Error
	}
	if d := sp.Delay; d != nil {
		a.Delay = s.draw(d.Min, d.Max)
		a.DelayEmulated = sp.DelayClock == DelayEmulated
	}
	return a
}

// draw picks a duration uniformly in [lo, hi], treating negatives as 0.
func (s *Set) draw(lo, hi time.Duration) time.Duration {
	lo = max(lo, 0)
	hi = max(hi, lo)
	span := uint64(hi - lo) // at most MaxInt64, so span+1 cannot wrap
	if span == 0 {
		return lo
	}
	return lo + time.Duration(s.rng.Uint64N(span+1))
}

// count builds the index of the faults held anew; s.mu is held.
func (s *Set) count() {
	order := append(append([]*Fault(nil), s.api...), s.scenario...)
	if len(order) == 0 {
		s.idx.Store(nil)
		return
	}
	s.idx.Store(buildIndex(order))
}

// Clone copies spec deeply (its delay and probability are pointers), so that neither
// the caller nor a snapshot's holder can change a held fault.
func (spec Spec) Clone() Spec {
	if spec.Delay != nil {
		d := *spec.Delay
		spec.Delay = &d
	}
	if spec.Probability != nil {
		p := *spec.Probability
		spec.Probability = &p
	}
	spec.Match.Query = maps.Clone(spec.Match.Query)
	spec.Match.Headers = maps.Clone(spec.Match.Headers)
	spec.Match.Body = maps.Clone(spec.Match.Body)
	spec.Headers = maps.Clone(spec.Headers)
	if spec.Body != nil {
		b := *spec.Body
		spec.Body = &b
	}
	if spec.Then != nil {
		then := make([]Step, len(spec.Then))
		for i, st := range spec.Then {
			if st.Delay != nil {
				d := *st.Delay
				st.Delay = &d
			}
			st.Headers = maps.Clone(st.Headers)
			if st.Body != nil {
				b := *st.Body
				st.Body = &b
			}
			then[i] = st
		}
		spec.Then = then
	}
	return spec
}

func snapshot(f *Fault) Fault {
	c := *f
	c.Spec = f.Spec.Clone()
	return c
}
