package scenario_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/bundle"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/httpapi"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
	"github.com/hostemu/hostemu/scenarios"
)

// brokenBuiltins is a registry over the embedded default and instant and a broken.yaml
// that does not parse (faults: is a list), as a developer's edit would leave it.
func brokenBuiltins(tb testing.TB) *scenario.Registry {
	tb.Helper()
	fsys := fstest.MapFS{"broken.yaml": {Data: []byte("name: broken\nfaults: 3\n")}}
	for _, f := range []string{"default.yaml", "instant.yaml"} {
		data, err := scenarios.FS.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		fsys[f] = &fstest.MapFile{Data: data}
	}
	reg, err := scenario.NewRegistryOver(fsys)
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}

// brokenWorld is a world started on the default of brokenBuiltins, and its control API.
func brokenWorld(tb testing.TB) (*scenario.Registry, http.Handler) {
	tb.Helper()
	reg := brokenBuiltins(tb)
	w, err := world.New(world.Config{Scenarios: reg, ClockMode: clock.Manual, ClockStart: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC),
		Fixtures: func() (state.Snapshot, error) { return state.Snapshot{}, nil }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close)
	return reg, httpapi.New(w, httpapi.Config{}).Handler()
}

// call serves one control request on h.
func call(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const brokenProblem = "built-in scenario broken.yaml is broken (a bug in hostemu): broken.yaml:2:9: "

// TestBrokenBuiltinListedWithItsProblem: a built-in that does not parse is listed (List,
// GET /_emulator/scenarios) with its problem, the file and every problem, where it had
// an empty description; choosing it stays the internal error it is (a bug in hostemu,
// not the client's): 500 internal_error in the envelope, the world unchanged.
func TestBrokenBuiltinListedWithItsProblem(t *testing.T) {
	reg, h := brokenWorld(t)
	list := reg.List()
	if len(list) != 3 || list[0].Name != "broken" || list[0].Description != "" || list[0].Source != scenario.SourceBuiltin ||
		!strings.HasPrefix(list[0].Problem, brokenProblem) {
		t.Errorf("List()[0] = %+v", list[0])
	}
	for _, info := range list[1:] {
		if info.Problem != "" || info.Description == "" {
			t.Errorf("a built-in that parses: %+v", info)
		}
	}

	rec := call(h, "GET", "/_emulator/scenarios", "")
	var got struct {
		Scenarios []map[string]any `json:"scenarios"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != 200 || err != nil || len(got.Scenarios) != 3 {
		t.Fatalf("GET /_emulator/scenarios: %d %s", rec.Code, rec.Body)
	}
	broken, _ := got.Scenarios[0]["problem"].(string)
	if got.Scenarios[0]["name"] != "broken" || got.Scenarios[0]["description"] != "" || !strings.HasPrefix(broken, brokenProblem) {
		t.Errorf("the broken built-in listed as %v", got.Scenarios[0])
	}
	if _, has := got.Scenarios[1]["problem"]; has {
		t.Errorf("a built-in that parses listed with a problem: %v", got.Scenarios[1])
	}

	rec = call(h, "PUT", "/_emulator/scenarios/active", `{"name":"broken"}`)
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); rec.Code != 500 || err != nil || env.Error.Code != "internal_error" {
		t.Errorf("PUT broken: %d %s", rec.Code, rec.Body)
	}
	rec = call(h, "GET", "/_emulator/scenarios", "")
	if !strings.Contains(rec.Body.String(), `"active":"default"`) {
		t.Errorf("after a refused switch: %s", rec.Body)
	}
}

// TestBrokenBuiltinIsNoRefusal: a built-in that does not parse (a bug in hostemu) is,
// wherever a world chooses it (its start, a switch), the *scenario.BuiltinError itself:
// not an apperr code, so the API answers an internal error in the envelope; not a
// *world.ScenarioRefusal, which would carry no error (a nil *apperr.Error, the caller's
// 400 or a panic) where New used to wrap it regardless.
func TestBrokenBuiltinIsNoRefusal(t *testing.T) {
	reg := brokenBuiltins(t)
	isBuiltinError := func(what string, err error) {
		t.Helper()
		var be *scenario.BuiltinError
		var refusal *world.ScenarioRefusal
		if _, coded := apperr.As(err); !errors.As(err, &be) || be.File != "broken.yaml" || coded || errors.As(err, &refusal) {
			t.Errorf("%s: %T %v; want the *scenario.BuiltinError of broken.yaml, uncoded", what, err, err)
		}
	}
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	empty := func() (state.Snapshot, error) { return state.Snapshot{}, nil }

	_, err := world.ChooseScenario(reg, "broken")
	isBuiltinError("ChooseScenario", err)

	w, err := world.New(world.Config{Scenarios: reg, Scenario: "broken", ClockMode: clock.Manual, ClockStart: start, Fixtures: empty})
	if w != nil {
		t.Error("New started a world on a broken built-in")
	}
	isBuiltinError("New", err)

	w, err = world.New(world.Config{Scenarios: reg, Scenario: "default", ClockMode: clock.Manual, ClockStart: start, Fixtures: empty})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	name := "broken"
	isBuiltinError("UseScenario", w.UseScenario(&name))
	if got := w.Scenario().Name; got != "default" {
		t.Errorf("after a failed switch the world runs %q", got)
	}

	worlds := &namespace.Worlds{Base: world.Config{Scenarios: reg, ClockMode: clock.Manual, ClockStart: start}, Start: start}
	ns, err := worlds.Namespace(namespace.Identity{ID: "ns_broken", Label: "broken"}, namespace.Spec{Scenario: &name})
	if ns != nil {
		ns.Close()
		t.Error("a namespace started on a broken built-in")
	}
	isBuiltinError("a namespace's creation", err)
}

// TestBundleExportParsesNoBuiltin: a bundle holds the text of every scenario the world
// knows, which needs no parse: the export parses no built-in (it used to call List,
// which parses every one for its description), and holds a broken one's file as it is.
func TestBundleExportParsesNoBuiltin(t *testing.T) {
	reg, h := brokenWorld(t)
	if n := reg.BuiltinParses(); n != 1 {
		t.Fatalf("a world on default parsed %d built-ins, want 1", n)
	}
	rec := call(h, "GET", "/_emulator/bundle", "")
	if rec.Code != 200 {
		t.Fatalf("GET /_emulator/bundle: %d %s", rec.Code, rec.Body)
	}
	if n := reg.BuiltinParses(); n != 1 {
		t.Errorf("the export parsed %d built-ins more", n-1)
	}
	b, err := bundle.Read(rec.Body, bundle.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"broken": "name: broken\nfaults: 3\n"}
	for _, name := range []string{"default", "instant"} {
		data, err := scenarios.FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		want[name] = string(data)
	}
	if len(b.Scenarios) != len(want) {
		t.Errorf("the bundle holds %d scenarios, want %d", len(b.Scenarios), len(want))
	}
	for name, text := range want {
		if !bytes.Equal(b.Scenarios[name], []byte(text)) {
			t.Errorf("scenarios/%s.yaml: %q, want the file as it is", name, b.Scenarios[name])
		}
	}
}
