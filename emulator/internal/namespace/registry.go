package namespace

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Defaults of --namespace-ttl and --max-namespaces.
const (
	DefaultTTL = 30 * time.Minute
	DefaultMax = 1000
)

// Config configures a Registry.
type Config struct {
	// TTL is how long a namespace may go unused before it is deleted (DefaultTTL when 0).
	TTL time.Duration
	// Max bounds the live namespaces (DefaultMax when 0).
	Max int
	// Now is the registry's clock, for idle expiry (time.Now when nil): wall time, not
	// any world's emulated time. Tests inject a fake one.
	Now func() time.Time
	// Build makes the world of a new namespace, not yet started, from its identity and
	// what the caller asked for. Its errors go to the caller as they are.
	Build func(id Identity, spec Spec) (*world.World, error)
	// MaxBytes bounds the worlds of all namespaces together, as their Weight estimates
	// them (DefaultMaxBytes when 0): a namespace that would go over is not created, an
	// import or an API call that would is refused, 507 storage_full.
	MaxBytes int64
}

// DefaultMaxBytes is the default of --max-world-bytes.
const DefaultMaxBytes = 1 << 30

// Registry holds the live namespaces. It is safe for concurrent use.
type Registry struct {
	cfg Config

	mu      sync.RWMutex          // guards byLabel and closed
	byLabel map[string]*Namespace // live namespaces by label
	// aliases are labels of namespaces that are gone, standing for the live namespace
	// their world was replayed into (Alias): their tokens and deployment hosts find it.
	aliases map[string]*Namespace
	closed  bool

	// retired holds the coverage of every deleted namespace, added up as each goes, so
	// that a run's coverage outlives its namespaces in memory bounded by the model, not
	// by how many namespaces there were.
	retired *coverage.Counter
}

// New returns an empty registry.
func New(cfg Config) *Registry {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMax
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	return &Registry{cfg: cfg, byLabel: map[string]*Namespace{}, aliases: map[string]*Namespace{}, retired: coverage.NewCounter(nil)}
}

// TTL is how long an unused namespace lives.
func (r *Registry) TTL() time.Duration { return r.cfg.TTL }

// Room is Create's 429 namespace_limit when Max are already live (after the idle ones
// are swept), else nil: a caller with much to read before it creates (a bundle) asks
// first, and Create asks again.
func (r *Registry) Room() error {
	if r.Len() >= r.cfg.Max {
		r.Sweep()
		if r.Len() >= r.cfg.Max {
			return r.limitError()
		}
	}
	return nil
}

// Create builds, registers and starts a new namespace: 429 namespace_limit when Max
// already live (after the idle ones are swept).
func (r *Registry) Create(spec Spec) (*Namespace, error) { return r.CreateWith(spec, nil) }

// CreateWith is Create, with fill (when not nil) run on the new world after it is built
// and before it is registered: nobody lists, finds, uses or deletes the namespace while
// fill runs (a bundle's replay), and one fill refuses is closed and never registered,
// fill's error returned. The bounds are checked again once fill is done, its weight
// included.
func (r *Registry) CreateWith(spec Spec, fill func(*world.World) error) (*Namespace, error) {
	if err := r.Room(); err != nil {
		return nil, err
	}
	id := newIdentity()
	w, err := r.cfg.Build(id, spec)
	if err != nil {
		return nil, err
	}
	if fill != nil {
		if err := fill(w); err != nil {
			w.Close()
			return nil, err
		}
	}
	now := r.cfg.Now()
	n := &Namespace{Identity: id, World: w, CreatedAt: now.UTC()}
	n.lastUsed.Store(now.UnixNano())
	r.mu.Lock()
	_, taken := r.byLabel[id.Label] // 60 random bits: never, but never twice either
	used := r.weightLocked()
	heavy := used+w.Weight() > r.cfg.MaxBytes
	if r.closed || taken || len(r.byLabel) >= r.cfg.Max || heavy {
		closed := r.closed
		r.mu.Unlock()
		w.Close()
		switch {
		case closed:
			return nil, apperr.New(apperr.ServiceUnavailable, "hostemu is shutting down")
		case taken:
			return r.CreateWith(spec, fill)
		case heavy:
			return nil, r.weightError(used, w.Weight())
		}
		return nil, r.limitError()
	}
	r.byLabel[id.Label] = n
	r.mu.Unlock()
	w.Start()
	return n, nil
}

// weightLocked is the live namespaces' worlds together; r.mu is held.
func (r *Registry) weightLocked() int64 {
	var n int64
	for _, ns := range r.byLabel {
		n += ns.World.Weight()
	}
	return n
}

func (r *Registry) weightError(used, want int64) error {
	return apperr.Errorf(apperr.StorageFull, "the namespaces' worlds hold about %d bytes of the %d --max-world-bytes allows; %d more do not fit: delete a namespace, or let idle ones expire", used, r.cfg.MaxBytes, want)
}

// Grow is a namespace world's Config.Grow: 507 storage_full when growing by delta
// bytes would take the namespaces over MaxBytes.
func (r *Registry) Grow(_ *world.World, delta int64) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if used := r.weightLocked(); used+delta > r.cfg.MaxBytes {
		return r.weightError(used, delta)
	}
	return nil
}

// Weight is the live namespaces' worlds together, as their Weight estimates them.
func (r *Registry) Weight() int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.weightLocked()
}

func (r *Registry) limitError() error {
	return apperr.Errorf(apperr.NamespaceLimit, "%d namespaces live, the most --max-namespaces allows; delete one or let idle ones expire (--namespace-ttl %s)", r.cfg.Max, r.cfg.TTL)
}

// Len is the number of namespaces registered (expired ones included until swept).
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byLabel)
}

// Get returns the live namespace of an id ("ns_…") and marks it used.
func (r *Registry) Get(id string) (*Namespace, error) {
	if n, ok := r.byLabelUsed(LabelOfID(id)); ok {
		return n, nil
	}
	return nil, apperr.Errorf(apperr.NamespaceNotFound, "no namespace %q (never created, deleted, or expired after %s unused)", id, r.ttl())
}

func (r *Registry) ttl() time.Duration {
	if r == nil {
		return DefaultTTL
	}
	return r.cfg.TTL
}

// ByToken returns the namespace whose hosting token or decryption key tok looks like,
// and marks it used. It does not check the token: the namespace's world does.
func (r *Registry) ByToken(tok string) (*Namespace, bool) {
	return r.byLabelUsed(labelOfToken(tok))
}

// ByLabel returns the namespace of a label (a deployment host's, or named by a header),
// and marks it used.
func (r *Registry) ByLabel(label string) (*Namespace, bool) { return r.byLabelUsed(label) }

// byLabelUsed finds a live namespace and marks it used; one found expired is deleted.
func (r *Registry) byLabelUsed(label string) (*Namespace, bool) {
	if r == nil || label == "" {
		return nil, false
	}
	r.mu.RLock()
	n, ok := r.byLabel[label]
	if !ok {
		n, ok = r.aliases[label]
	}
	r.mu.RUnlock()
	if !ok {
		return nil, false
	}
	now := r.cfg.Now().UnixNano()
	if r.expired(n, now) {
		r.remove(n)
		return nil, false
	}
	n.lastUsed.Store(now)
	return n, true
}

// expired reports whether n has gone unused for TTL at now (unix nanoseconds).
func (r *Registry) expired(n *Namespace, now int64) bool {
	return now-n.lastUsed.Load() >= int64(r.cfg.TTL)
}

// Delete deletes a namespace at once: its tokens stop working and its world's timers
// and goroutine stop.
func (r *Registry) Delete(id string) error {
	r.mu.RLock()
	n, ok := r.byLabel[LabelOfID(id)]
	r.mu.RUnlock()
	if !ok || !r.remove(n) {
		return apperr.Errorf(apperr.NamespaceNotFound, "no namespace %q", id)
	}
	return nil
}

// remove unregisters n and closes its world; false if it was gone already.
func (r *Registry) remove(n *Namespace) bool {
	r.mu.Lock()
	if r.byLabel[n.Label] != n {
		r.mu.Unlock()
		return false
	}
	delete(r.byLabel, n.Label)
	for label, m := range r.aliases {
		if m == n {
			delete(r.aliases, label)
		}
	}
	r.mu.Unlock()
	n.World.Close()
	r.retired.Add(n.World.Coverage())
	return true
}

// Alias makes label, a namespace's that is not live (a failure bundle's, replayed into
// n), stand for n: tokens and deployment hosts that carry it find n's world. It is
// false, and nothing changes, when label is live, or names n itself.
func (r *Registry) Alias(label string, n *Namespace) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if label == "" || label == n.Label || r.byLabel[n.Label] != n {
		return false
	}
	if _, live := r.byLabel[label]; live {
		return false
	}
	for l, m := range r.aliases { // one alias a namespace: the last bundle's
		if m == n {
			delete(r.aliases, l)
		}
	}
	r.aliases[label] = n
	return true
}

// Coverage is the coverage of every live namespace and of every namespace deleted
// since start (or since ResetCoverage), added up.
func (r *Registry) Coverage() *coverage.Counter {
	u := coverage.Union(nil, r.retired)
	r.Each(func(w *world.World) { u.Add(w.Coverage()) })
	return u
}

// ResetCoverage starts the coverage of every namespace, live or deleted, afresh.
func (r *Registry) ResetCoverage() {
	r.retired.Reset()
	r.Each(func(w *world.World) { w.Coverage().Reset() })
}

// List describes the live namespaces, oldest first.
func (r *Registry) List() []Info {
	r.Sweep()
	r.mu.RLock()
	out := make([]Info, 0, len(r.byLabel))
	for _, n := range r.byLabel {
		out = append(out, n.info())
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if ci, cj := time.Time(out[i].CreatedAt), time.Time(out[j].CreatedAt); !ci.Equal(cj) {
			return ci.Before(cj)
		}
		return out[i].Namespace < out[j].Namespace
	})
	return out
}

// Each calls f with the world of every live namespace (a scenario reload refreshes
// them all).
func (r *Registry) Each(f func(*world.World)) {
	r.mu.RLock()
	ws := make([]*world.World, 0, len(r.byLabel))
	for _, n := range r.byLabel {
		ws = append(ws, n.World)
	}
	r.mu.RUnlock()
	for _, w := range ws {
		f(w)
	}
}

// Sweep deletes every namespace unused for TTL and returns how many it deleted.
func (r *Registry) Sweep() int {
	now := r.cfg.Now().UnixNano()
	var expired []*Namespace
	r.mu.RLock()
	for _, n := range r.byLabel {
		if r.expired(n, now) {
			expired = append(expired, n)
		}
	}
	r.mu.RUnlock()
	gone := 0
	for _, n := range expired {
		if r.remove(n) {
			gone++
		}
	}
	return gone
}

// Run sweeps expired namespaces every TTL/10 (at least every second, at most every
// minute) until ctx ends.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(min(max(r.cfg.TTL/10, time.Second), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Sweep()
		}
	}
}

// Close deletes every namespace and refuses new ones.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	all := r.byLabel
	r.byLabel, r.aliases = map[string]*Namespace{}, map[string]*Namespace{}
	r.mu.Unlock()
	for _, n := range all {
		n.World.Close()
		r.retired.Add(n.World.Coverage())
	}
}
