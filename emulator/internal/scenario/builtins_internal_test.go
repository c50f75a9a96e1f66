package scenario

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/hostemu/hostemu/scenarios"
)

// freshRegistry is a registry over a set of built-ins of its own, none parsed yet, so
// that a test can count its parses whatever other tests parsed in the process's set.
func freshRegistry(tb testing.TB) (*Registry, *builtinSet) {
	tb.Helper()
	set := newBuiltinSet(scenarios.FS)
	r, err := newRegistry(set)
	if err != nil {
		tb.Fatal(err)
	}
	return r, set
}

func TestBuiltinsParseOnFirstUse(t *testing.T) {
	r, set := freshRegistry(t)
	wantParses := func(step string, want int32) {
		t.Helper()
		if got := set.parses.Load(); got != want {
			t.Fatalf("after %s: %d built-ins parsed, want %d", step, got, want)
		}
	}
	// the default only, every other parse's base: a start parses it whatever it runs on
	wantParses("NewRegistry", 1)
	def, ok := r.Get("default")
	if !ok || def.Name != "default" || def.Source != SourceBuiltin {
		t.Fatalf("Get(default) = %+v, %v", def, ok)
	}
	wantParses("Get(default)", 1)
	if again, _ := r.Get("default"); again != def {
		t.Error("a second Get(default) parsed it again")
	}
	r.Version()
	r.Problems()
	r.Broken("flaky")
	r.BrokenMessage("flaky")
	if msg := r.NotFound("flakey"); !strings.Contains(msg, `did you mean "flaky"`) {
		t.Errorf("NotFound: %s", msg)
	}
	if _, ok := r.Get("no-such"); ok {
		t.Error("Get(no-such) found one")
	}
	if ps := r.AddInline("inline", []byte("name: flaky\ndescription: mine\n")); len(ps) > 0 {
		t.Fatal(ps)
	}
	d, ps := r.Derive("spec.scenarios", []string{"name: instant\ndescription: own\n"})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if s, _ := d.Get("default"); s != def {
		t.Error("a derived registry's default is not the base's")
	}
	wantParses("names, problems, overrides and a derive", 1)

	other, err := newRegistry(set)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := other.Get("default"); s != def {
		t.Error("a second registry parsed default again")
	}
	wantParses("a second registry's Get(default)", 1)

	list := r.List()
	// flaky is the inline one: 7 built-ins, 6 parsed for the list, default already was
	wantParses("List", 6)
	if len(list) != 7 || list[2].Name != "flaky" || list[2].Description != "mine" {
		t.Errorf("List = %+v", list)
	}
	r.List()
	wantParses("a second List", 6)
}

func TestEmbeddedRegistryParsesOnlyWhatItUses(t *testing.T) {
	// the process's own set: whatever else ran, a fresh registry's Get parses at most
	// the one it gets and the default, the base of both
	set := embeddedBuiltins()
	before := set.parses.Load()
	r, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get("slow-dns"); !ok {
		t.Fatal("no slow-dns")
	}
	if n := set.parses.Load() - before; n > 2 {
		t.Errorf("NewRegistry and Get(slow-dns) parsed %d built-ins, want at most 2", n)
	}
}

func TestBrokenBuiltinIsAnErrorNamingItsFile(t *testing.T) {
	def, err := scenarios.FS.ReadFile("default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"default.yaml":  {Data: def},
		"broken.yaml":   {Data: []byte("name: broken\nfaults: 3\n")},
		"misnamed.yaml": {Data: []byte("name: other\n")},
	}
	r, err := newRegistry(newBuiltinSet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"broken", "misnamed"} {
		s, ok, err := r.Find(name)
		var be *BuiltinError
		if s != nil || ok || !errors.As(err, &be) || be.File != name+".yaml" || !strings.Contains(err.Error(), name+".yaml") {
			t.Errorf("Find(%s) = %v, %v, %v; want a BuiltinError naming %s.yaml", name, s, ok, err, name)
		}
		if _, ok := r.Get(name); ok {
			t.Errorf("Get(%s) found it", name)
		}
	}
	var names []string
	for _, info := range r.List() {
		names = append(names, info.Name)
	}
	if fmt.Sprint(names) != "[broken default misnamed]" {
		t.Errorf("List's names %v: a broken built-in is listed, not left out", names)
	}
	delete(fsys, "default.yaml")
	if _, err := newRegistry(newBuiltinSet(fsys)); err == nil || !strings.Contains(err.Error(), "no built-in default") {
		t.Errorf("no default: %v", err)
	}
}

// TestBrokenDefaultIsAnErrorNamingIt: default.yaml, every parse's base, used to panic
// when it did not parse (at the first parse of anything). It is a *BuiltinError naming
// default.yaml instead: no registry is made over it (so a start fails with it), every
// other built-in fails with it, and a document parsed over it has it as its problem.
func TestBrokenDefaultIsAnErrorNamingIt(t *testing.T) {
	slow, err := scenarios.FS.ReadFile("slow-dns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := newBuiltinSet(fstest.MapFS{
		"default.yaml":  {Data: []byte("name: default\ndescription: every other key left out\n")},
		"slow-dns.yaml": {Data: slow},
	})
	isDefaultsError := func(what string, err error) {
		t.Helper()
		var be *BuiltinError
		if !errors.As(err, &be) || be.File != "default.yaml" || !strings.Contains(err.Error(), "default.yaml:1:1: the scenario: missing deployments") {
			t.Errorf("%s: %v; want the BuiltinError of default.yaml", what, err)
		}
	}
	r, err := newRegistry(set)
	if r != nil {
		t.Error("newRegistry made a registry over a broken default")
	}
	isDefaultsError("newRegistry", err)
	_, ok, err := set.get("slow-dns")
	if ok {
		t.Error("slow-dns parsed with no base")
	}
	isDefaultsError("get(slow-dns)", err)
	s, ps := set.parseDoc("mine.yaml", []byte("name: mine\n"))
	if s != nil || len(ps) != 1 || ps[0].File != "mine.yaml" || ps[0].Line != 1 ||
		!strings.HasPrefix(ps[0].Message, "cannot be checked: built-in scenario default.yaml is broken (a bug in hostemu): default.yaml:1:1:") {
		t.Errorf("parseDoc over a broken default: %v, %v", s, ps)
	}
	if n := set.parses.Load(); n != 2 {
		t.Errorf("%d parses, want 2: the default's error is kept, not parsed again", n)
	}
}

// TestSourcesParseNothing: Sources (a bundle's scenarios/) is every scenario's text with
// no parse: a built-in's file as it is, an override's document in its place.
func TestSourcesParseNothing(t *testing.T) {
	r, set := freshRegistry(t)
	if ps := r.AddInline("inline", []byte("name: flaky\ndescription: mine\n")); len(ps) > 0 {
		t.Fatal(ps)
	}
	d, ps := r.Derive("spec.scenarios", []string{"name: instant\ndescription: own\n", "name: extra\n"})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	src, derived := r.Sources(), d.Sources()
	if n := set.parses.Load(); n != 1 {
		t.Fatalf("%d built-ins parsed, want 1 (the default, at NewRegistry)", n)
	}
	if string(src["flaky"]) != "name: flaky\ndescription: mine\n" || string(derived["instant"]) != "name: instant\ndescription: own\n" ||
		string(derived["extra"]) != "name: extra\n" || string(derived["flaky"]) != string(src["flaky"]) {
		t.Errorf("overrides: flaky %q, derived instant %q, extra %q", src["flaky"], derived["instant"], derived["extra"])
	}
	for _, info := range r.List() { // List parses: after the count
		s, ok := r.Get(info.Name)
		if !ok || string(src[info.Name]) != string(s.Raw) {
			t.Errorf("Sources()[%s] = %q, want its Raw %q", info.Name, src[info.Name], s.Raw)
		}
	}
	if len(src) != len(r.List()) || len(derived) != len(d.List()) {
		t.Errorf("Sources names %d and %d scenarios, List %d and %d", len(src), len(derived), len(r.List()), len(d.List()))
	}
}

func TestConcurrentFirstUsesShareOneParse(t *testing.T) {
	r, set := freshRegistry(t)
	d, ps := r.Derive("docs", []string{"name: own\n"})
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	names := set.names
	const goroutines = 32
	got := make([][]*Scenario, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reg := r
			if g%2 == 1 {
				reg = d
			}
			for i := range names {
				name := names[(g+i)%len(names)] // each goroutine starts elsewhere
				s, ok := reg.Get(name)
				if !ok {
					t.Errorf("Get(%s) failed", name)
				}
				got[g] = append(got[g], s)
				if g%4 == 0 {
					reg.List()
				}
			}
		}()
	}
	wg.Wait()
	if n := set.parses.Load(); n != int32(len(names)) {
		t.Errorf("%d parses of %d built-ins", n, len(names))
	}
	for g := range got {
		for i, s := range got[g] {
			if want, _ := r.Get(names[(g+i)%len(names)]); s != want {
				t.Errorf("goroutine %d got another %s", g, s.Name)
			}
		}
	}
}

func TestDefaultBuiltinIsTheBase(t *testing.T) {
	data, err := scenarios.FS.ReadFile("default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, ps := Parse("default.yaml", data)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	s.Source = SourceBuiltin
	def, err := defaultScenario()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, def) {
		t.Error("default.yaml parsed over the default differs from the default: the registry's default cannot be the base")
	}
	r, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("default"); got != def {
		t.Error("the registry's default is a parse of its own")
	}
}
