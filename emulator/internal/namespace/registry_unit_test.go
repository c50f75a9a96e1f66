package namespace

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// fakeClock is the registry's wall clock, moved by hand.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// newRegistry is a registry of empty worlds on a fake clock; built counts the worlds
// made.
func newRegistry(t *testing.T, cfg Config) (*Registry, *fakeClock, *atomic.Int32) {
	t.Helper()
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{}
	clk.ns.Store(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	var built atomic.Int32
	cfg.Now = clk.now
	cfg.Build = func(id Identity, spec Spec) (*world.World, error) {
		built.Add(1)
		return world.New(world.Config{Scenarios: reg, TokenPrefix: TokenPrefix(id.Label), Fixtures: func() (state.Snapshot, error) {
			return state.Snapshot{Tokens: []state.Token{{Token: id.Tokens.Read, Scope: state.ScopeRead}}}, nil
		}})
	}
	r := New(cfg)
	t.Cleanup(r.Close)
	return r, clk, &built
}

func codeOf(err error) apperr.Code {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}

// An identity's id, label, tokens and key name each other, and each namespace's is its
// own.
func TestIdentity(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := newIdentity()
		if id.ID != Prefix+id.Label || LabelOfID(id.ID) != id.Label || len(id.Label) != labelLen || !state.ValidLabel(id.Label) {
			t.Fatalf("identity %+v", id)
		}
		for _, tok := range []string{id.Tokens.Read, id.Tokens.Deploy, id.Tokens.Admin, id.CipherKey} {
			if labelOfToken(tok) != id.Label || !strings.HasPrefix(tok, TokenPrefix(id.Label)) {
				t.Fatalf("token %q does not carry label %q", tok, id.Label)
			}
			if seen[tok] {
				t.Fatalf("token %q drawn twice", tok)
			}
			seen[tok] = true
		}
	}
	for _, tc := range []struct{ in, label string }{
		{"ns_abc", "abc"}, {"ns_", ""}, {"abc", ""}, {"", ""}, {"NS_abc", ""},
	} {
		if got := LabelOfID(tc.in); got != tc.label {
			t.Errorf("LabelOfID(%q) = %q, want %q", tc.in, got, tc.label)
		}
	}
	for _, tc := range []struct{ in, label string }{
		{"ns_abc_read_x", "abc"}, {"ns_abc", ""}, {"ns__x", ""}, {"hostemu-read", ""}, {"", ""},
	} {
		if got := labelOfToken(tc.in); got != tc.label {
			t.Errorf("labelOfToken(%q) = %q, want %q", tc.in, got, tc.label)
		}
	}
}

// Create, Get, ByToken, ByLabel and Delete find one namespace by any of its names; a
// deleted one is namespace_not_found everywhere.
func TestRegistryFindsAndDeletes(t *testing.T) {
	r, _, _ := newRegistry(t, Config{})
	n, err := r.Create(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := r.Create(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 2 || n.World == other.World {
		t.Fatalf("two namespaces: len %d, shared world %v", r.Len(), n.World == other.World)
	}
	for name, find := range map[string]func() (*Namespace, bool){
		"Get":     func() (*Namespace, bool) { m, err := r.Get(n.ID); return m, err == nil },
		"ByToken": func() (*Namespace, bool) { return r.ByToken(n.Tokens.Deploy) },
		"key":     func() (*Namespace, bool) { return r.ByToken(n.CipherKey) },
		"ByLabel": func() (*Namespace, bool) { return r.ByLabel(n.Label) },
	} {
		if m, ok := find(); !ok || m != n {
			t.Errorf("%s: %v %v", name, m, ok)
		}
	}
	if _, ok := r.ByToken("hostemu-read"); ok {
		t.Error("a well-known token found a namespace")
	}
	if err := r.Delete(n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(n.ID); codeOf(err) != apperr.NamespaceNotFound {
		t.Fatalf("Get after Delete: %v", err)
	}
	if _, ok := r.ByToken(n.Tokens.Read); ok {
		t.Fatal("a deleted namespace's token still finds it")
	}
	if err := r.Delete(n.ID); codeOf(err) != apperr.NamespaceNotFound {
		t.Fatalf("a second Delete: %v", err)
	}
	if list := r.List(); len(list) != 1 || list[0].Namespace != other.ID {
		t.Fatalf("List %+v", list)
	}
}

// A namespace unused for TTL expires (swept, or found expired on use); every use moves
// its deadline.
func TestRegistryExpiresIdleNamespaces(t *testing.T) {
	r, clk, _ := newRegistry(t, Config{TTL: time.Minute})
	kept, _ := r.Create(Spec{})
	idle, _ := r.Create(Spec{})
	clk.advance(50 * time.Second)
	if _, ok := r.ByToken(kept.Tokens.Read); !ok {
		t.Fatal("kept expired early")
	}
	clk.advance(30 * time.Second) // idle: 80 s unused; kept: 30 s
	if gone := r.Sweep(); gone != 1 {
		t.Fatalf("swept %d, want 1", gone)
	}
	if _, err := r.Get(idle.ID); codeOf(err) != apperr.NamespaceNotFound {
		t.Fatalf("idle namespace after its TTL: %v", err)
	}
	clk.advance(time.Minute)
	if _, ok := r.ByLabel(kept.Label); ok || r.Len() != 0 {
		t.Fatalf("a namespace found after its TTL (len %d)", r.Len())
	}
}

// At most Max live at once: the next is 429 namespace_limit, unless idle ones can be
// swept first; nothing is built for a refused one.
func TestRegistryBoundsTheCount(t *testing.T) {
	r, clk, built := newRegistry(t, Config{Max: 2, TTL: time.Minute})
	for range 2 {
		if _, err := r.Create(Spec{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Create(Spec{}); codeOf(err) != apperr.NamespaceLimit || !strings.Contains(err.Error(), "--max-namespaces") {
		t.Fatalf("third namespace: %v", err)
	}
	if built.Load() != 2 {
		t.Fatalf("built %d worlds for 2 namespaces", built.Load())
	}
	clk.advance(2 * time.Minute)
	if _, err := r.Create(Spec{}); err != nil {
		t.Fatalf("after the others expired: %v", err)
	}
}

// Concurrent creates never pass Max, and a closed registry makes none.
func TestRegistryConcurrentCreatesAndClose(t *testing.T) {
	r, _, _ := newRegistry(t, Config{Max: 5})
	var wg sync.WaitGroup
	var made, refused atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Create(Spec{}); err == nil {
				made.Add(1)
			} else if codeOf(err) == apperr.NamespaceLimit {
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	if made.Load() != 5 || refused.Load() != 15 || r.Len() != 5 {
		t.Fatalf("made %d, refused %d, len %d", made.Load(), refused.Load(), r.Len())
	}
	r.Close()
	if _, err := r.Create(Spec{}); err == nil || codeOf(err) != apperr.ServiceUnavailable || r.Len() != 0 {
		t.Fatalf("create after Close: %v (len %d)", err, r.Len())
	}
}

// A world that cannot be built is the caller's error, as it is, and nothing is
// registered.
func TestRegistryBuildError(t *testing.T) {
	boom := apperr.New(apperr.InvalidRequest, "bad fixtures")
	r := New(Config{Build: func(Identity, Spec) (*world.World, error) { return nil, boom }})
	if _, err := r.Create(Spec{}); !errors.Is(err, boom) || r.Len() != 0 {
		t.Fatalf("create: %v, len %d", err, r.Len())
	}
}

// CreateWith fills the new world before anyone can see the namespace: while fill runs
// it is not listed, counted, found by id or label, nor deletable; a fill that fails
// leaves nothing registered and its world closed; the bounds count what fill added.
func TestCreateWithFillsBeforeAnyoneSees(t *testing.T) {
	r, _, _ := newRegistry(t, Config{Max: 2})
	var seen *world.World
	n, err := r.CreateWith(Spec{}, func(w *world.World) error {
		seen = w
		if r.Len() != 0 || len(r.List()) != 0 {
			t.Errorf("a namespace being filled is registered: Len %d, List %v", r.Len(), r.List())
		}
		return nil
	})
	if err != nil || n.World != seen {
		t.Fatalf("CreateWith: %v (world %p, filled %p)", err, n.World, seen)
	}
	if _, err := r.Get(n.ID); err != nil {
		t.Fatalf("the filled namespace is not registered once done: %v", err)
	}
	var inside string
	_, err = r.CreateWith(Spec{}, func(w *world.World) error {
		inside = w.Namespace()
		if _, err := r.Get(Prefix + inside); err == nil {
			t.Error("a namespace being filled is found by its id")
		}
		if err := r.Delete(Prefix + inside); err == nil {
			t.Error("a namespace being filled was deleted")
		}
		return apperr.New(apperr.InvalidRequest, "refused by fill")
	})
	if codeOf(err) != apperr.InvalidRequest || r.Len() != 1 {
		t.Fatalf("a refused fill: %v, %d registered (want its error, 1)", err, r.Len())
	}
	if _, err := r.Get(Prefix + inside); err == nil {
		t.Error("a refused fill's namespace was registered")
	}
}

// What fill adds counts against MaxBytes when the namespace is registered: 507, and
// nothing registered.
func TestCreateWithCountsWhatFillAdded(t *testing.T) {
	r, _, _ := newRegistry(t, Config{MaxBytes: 64 << 10})
	_, err := r.CreateWith(Spec{}, func(w *world.World) error {
		var snap state.Snapshot
		for i := range 2000 {
			snap.Tokens = append(snap.Tokens, state.Token{Token: fmt.Sprintf("%s%06d-read", TokenPrefix(w.Namespace()), i), Scope: state.ScopeRead})
		}
		return w.Import(snap)
	})
	if codeOf(err) != apperr.StorageFull || r.Len() != 0 {
		t.Fatalf("a fill over MaxBytes: %v, %d registered (want storage_full, 0)", err, r.Len())
	}
}
