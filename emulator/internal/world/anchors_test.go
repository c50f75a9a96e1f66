package world

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// keptAnchors finds the anchors' resources in the store prepared for the state: it
// keeps exactly the anchors a pass over the state's deployments and domains keeps (the
// way it was found before), whatever else a bundle's lifecycles name.
func TestKeptAnchorsAreTheStatesOwn(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	snap := state.Snapshot{Projects: []state.Project{{ID: "prj_a", Name: "a", CreatedAt: at}}}
	for i := range 50 {
		snap.Deployments = append(snap.Deployments, state.Deployment{ID: fmt.Sprintf("dpl_%03d", i), ProjectID: "prj_a", CreatedAt: at})
	}
	for i := range 5 {
		snap.Domains = append(snap.Domains, state.Domain{Hostname: fmt.Sprintf("d%d.example.com", i), ProjectID: "prj_a", CreatedAt: at})
	}
	lifecycles := map[string]time.Time{}
	for i, key := range []string{
		"dpl:dpl_003", "dpl:dpl_049", "dpl:dpl_050", "dpl:", "dpl:d1.example.com",
		"dom:d0.example.com", "crt:d0.example.com", "crt:d4.example.com", "dom:d9.example.com",
		"dom:dpl_003", "crt:", "xyz:dpl_003", "dpl_003", "", "DPL:dpl_003", "dpl:dpl_003 ",
	} {
		lifecycles[key] = at.Add(time.Duration(i) * time.Second)
	}
	// what a pass over the state keeps
	want := map[string]time.Time{}
	keep := func(key string) {
		if t, ok := lifecycles[key]; ok {
			want[key] = t
		}
	}
	for _, d := range snap.Deployments {
		keep(kindPrefix[kindDeployment] + d.ID)
	}
	for _, d := range snap.Domains {
		keep(kindPrefix[kindDomain] + d.Hostname)
		keep(kindPrefix[kindCert] + d.Hostname)
	}
	if len(want) != 5 {
		t.Fatalf("the test's own oracle keeps %d anchors: %v", len(want), want)
	}
	p := state.New().Prepare(snap)
	for name, kept := range map[string]func(map[string]time.Time) map[string]time.Time{
		"keptAnchors":  func(l map[string]time.Time) map[string]time.Time { return keptAnchors(l, &snap, p) },
		"keptByLookup": func(l map[string]time.Time) map[string]time.Time { return keptByLookup(l, p) },
		"keptByState":  func(l map[string]time.Time) map[string]time.Time { return keptByState(l, &snap) },
	} {
		if got := kept(lifecycles); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: kept %v, want %v", name, got, want)
		}
		if got := kept(nil); got == nil || len(got) != 0 {
			t.Errorf("%s, no lifecycles: kept %v, want an empty map", name, got)
		}
	}
	// more anchors than the state has resources: the state's are looked up among them
	many := maps.Clone(lifecycles)
	for i := range 100 {
		many[fmt.Sprintf("dpl:dpl_x%03d", i)] = at
	}
	if got := keptAnchors(many, &snap, p); !reflect.DeepEqual(got, want) {
		t.Errorf("many anchors: kept %v, want %v", got, want)
	}
}
