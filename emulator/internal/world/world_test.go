package world_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// newWorld starts a world on snap; each load gets its own copy, as fixtures must.
func newWorld(t *testing.T, snap state.Snapshot) *world.World {
	t.Helper()
	fresh := func() (state.Snapshot, error) {
		c := snap
		c.Deployments = slices.Clone(snap.Deployments)
		c.Domains = slices.Clone(snap.Domains)
		return c, nil
	}
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	w, err := world.New(world.Config{ClockMode: clock.Manual, ClockStart: t0, Scenarios: reg,
		Fixtures: fresh})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func project() state.Snapshot {
	return state.Snapshot{Projects: []state.Project{{ID: "prj_a", Name: "a", CreatedAt: t0.Add(-time.Hour), Env: map[string]string{"A": "1", "B": "2"}}}}
}

func TestMergeEnv(t *testing.T) {
	got := world.MergeEnv(map[string]string{"A": "1", "B": "2"}, map[string]string{"B": "3", "C": "4"})
	if len(got) != 3 || got["A"] != "1" || got["B"] != "3" || got["C"] != "4" {
		t.Fatalf("MergeEnv = %v", got)
	}
}

func TestLifecycleAndForcedStatus(t *testing.T) {
	w := newWorld(t, project())
	d, err := w.CreateDeployment(world.NewDeployment{ProjectID: "prj_a", Target: state.TargetProduction})
	if err != nil {
		t.Fatal(err)
	}
	w.Advance(time.Second)
	if got, _, _ := w.Store.Deployment(d.ID); got.Status != state.StatusBuilding {
		t.Fatalf("after 1s: %s", got.Status)
	}
	if _, err := w.ForceDeploymentStatus(d.ID, state.StatusQueued); err != nil {
		t.Fatal(err)
	}
	w.Advance(time.Hour)
	got, production, _ := w.Store.Deployment(d.ID)
	if got.Status != state.StatusQueued || production {
		t.Fatalf("a forced status was overwritten: %s, production %v", got.Status, production)
	}
	if _, err := w.ForceDeploymentStatus(d.ID, "shipped"); err == nil {
		t.Error("an unknown status was forced")
	}
}

// A loaded state resumes what is in flight: a building deployment finishes, a pending
// domain verifies and gets its certificate, which then renews.
func TestResumeInFlight(t *testing.T) {
	snap := project()
	at := t0.Add(-time.Minute)
	snap.Deployments = []state.Deployment{{ID: "dpl_b", ProjectID: "prj_a", Target: "preview", Status: state.StatusBuilding, CreatedAt: at, Timings: state.Timings{QueuedAt: &at}}}
	snap.Domains = []state.Domain{{Hostname: "a.test", ProjectID: "prj_a", Status: state.StatusPending, CreatedAt: at, TLS: state.TLS{Status: state.TLSPending}}}
	w := newWorld(t, snap)
	w.Advance(12 * time.Second)
	if d, _, _ := w.Store.Deployment("dpl_b"); d.Status != state.StatusReady || d.Timings.ReadyAt == nil {
		t.Fatalf("resumed deployment: %+v", d)
	}
	dom, _ := w.Store.Domain("a.test")
	if dom.Status != state.StatusActive || dom.TLS.Status != state.TLSIssued {
		t.Fatalf("resumed domain: %+v", dom)
	}
	first := *dom.TLS.ExpiresAt
	w.Advance(61 * 24 * time.Hour)
	dom, _ = w.Store.Domain("a.test")
	if !dom.TLS.ExpiresAt.After(first) {
		t.Fatalf("certificate not renewed: %v then %v", first, *dom.TLS.ExpiresAt)
	}
}

func TestDeleteDomainDetachesLater(t *testing.T) {
	w := newWorld(t, project())
	if _, err := w.AddDomain(world.NewDomain{ProjectID: "prj_a", Hostname: "a.test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DeleteDomain("prj_a", "a.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddDomain(world.NewDomain{ProjectID: "prj_a", Hostname: "a.test"}); err != nil {
		t.Fatalf("hostname not free at once: %v", err)
	}
	w.Advance(20 * time.Second) // the old lifecycle must not touch the new domain
	if d, _ := w.Store.Domain("a.test"); d.Status != state.StatusActive {
		t.Fatalf("re-added domain: %s", d.Status)
	}
	if n := len(w.Store.Detaching()); n != 0 {
		t.Fatalf("%d hostnames still detaching after 20 s", n)
	}
}

func TestResetRestartsIDs(t *testing.T) {
	w := newWorld(t, project())
	a, _ := w.CreateDeployment(world.NewDeployment{ProjectID: "prj_a", Target: "preview"})
	if err := w.Reset(); err != nil {
		t.Fatal(err)
	}
	b, _ := w.CreateDeployment(world.NewDeployment{ProjectID: "prj_a", Target: "preview"})
	if a.ID != b.ID || !b.CreatedAt.Equal(t0) {
		t.Fatalf("after reset: %s at %v, want %s at %v", b.ID, b.CreatedAt, a.ID, t0)
	}
}
