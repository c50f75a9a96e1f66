package world_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// newWorld starts a world on snap; each load gets its own copy, as fixtures must.
func newWorld(t testing.TB, snap state.Snapshot) *world.World {
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
	d, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}, Target: ptr(state.TargetProduction)})
	if err != nil {
		t.Fatal(err)
	}
	w.Advance(time.Second)
	if got, _, _, _ := w.Deployment(d.ID); got.Status != state.StatusBuilding {
		t.Fatalf("after 1s: %s", got.Status)
	}
	if _, err := w.ForceDeploymentStatus(d.ID, world.ForcedStatus{Status: ptr(state.StatusQueued)}); err != nil {
		t.Fatal(err)
	}
	w.Advance(time.Hour)
	got, _, production, _ := w.Deployment(d.ID)
	if got.Status != state.StatusQueued || production {
		t.Fatalf("a forced status was overwritten: %s, production %v", got.Status, production)
	}
	if _, err := w.ForceDeploymentStatus(d.ID, world.ForcedStatus{Status: ptr("shipped")}); err == nil {
		t.Error("an unknown status was forced")
	}
}

// A loaded state resumes what is in flight: a building deployment finishes, a pending
// domain verifies and gets its certificate, which then renews.
func TestResumeInFlight(t *testing.T) {
	snap := project()
	at := t0.Add(-time.Minute)
	snap.Deployments = []state.Deployment{{ID: "dpl_b", ProjectID: "prj_a", Files: map[string]string{}, Target: "preview", Status: state.StatusBuilding, CreatedAt: at, Timings: state.Timings{QueuedAt: &at, BuildingAt: &at}}}
	snap.Domains = []state.Domain{{Hostname: "a.test", ProjectID: "prj_a", Status: state.StatusPending, CreatedAt: at, TLS: state.TLS{Status: state.TLSPending}}}
	w := newWorld(t, snap)
	w.Advance(12 * time.Second)
	if d, _, _, _ := w.Deployment("dpl_b"); d.Status != state.StatusReady || d.Timings.ReadyAt == nil {
		t.Fatalf("resumed deployment: %+v", d)
	}
	dom, _ := w.Domain("a.test")
	if dom.Status != state.StatusActive || dom.TLS.Status != state.TLSIssued {
		t.Fatalf("resumed domain: %+v", dom)
	}
	first := *dom.TLS.ExpiresAt
	w.Advance(61 * 24 * time.Hour)
	dom, _ = w.Domain("a.test")
	if !dom.TLS.ExpiresAt.After(first) {
		t.Fatalf("certificate not renewed: %v then %v", first, *dom.TLS.ExpiresAt)
	}
}

func TestDeleteDomainDetachesLater(t *testing.T) {
	w := newWorld(t, project())
	if _, err := w.AddDomain("prj_a", world.NewDomain{Hostname: ptr("a.test")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DeleteDomain("prj_a", "a.test"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddDomain("prj_a", world.NewDomain{Hostname: ptr("a.test")}); err != nil {
		t.Fatalf("hostname not free at once: %v", err)
	}
	w.Advance(20 * time.Second) // the old lifecycle must not touch the new domain
	if d, _ := w.Domain("a.test"); d.Status != state.StatusActive {
		t.Fatalf("re-added domain: %s", d.Status)
	}
	if n := len(w.Export().Detaching); n != 0 {
		t.Fatalf("%d hostnames still detaching after 20 s", n)
	}
}

func TestResetRestartsIDs(t *testing.T) {
	w := newWorld(t, project())
	a, _ := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}})
	if err := w.Reset(); err != nil {
		t.Fatal(err)
	}
	b, _ := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}})
	if a.ID != b.ID || !b.CreatedAt.Equal(t0) {
		t.Fatalf("after reset: %s at %v, want %s at %v", b.ID, b.CreatedAt, a.ID, t0)
	}
}

func ptr[T any](v T) *T { return &v }

// Every change counts where it happens: a caller cannot forget it, so a --state saver
// that writes when Changes moves never misses one (a revoked token came back after a
// restart because the revoke path forgot to count).
func TestEveryChangeCounts(t *testing.T) {
	w := newWorld(t, project())
	tok, err := w.MintToken(ptr("deploy"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("hello")
	steps := []struct {
		name string
		do   func() error
	}{
		{"revoke token", func() error { return w.RevokeToken(tok.Token) }},
		{"mint token", func() error { _, err := w.MintToken(ptr("read")); return err }},
		{"upload file", func() error {
			return w.UploadFile("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", body)
		}},
		{"transition", func() error { _, err := w.Advance(6 * time.Second); return err }},
		{"promote", func() error { _, _, err := w.Promote(d.ID); return err }},
		{"add domain", func() error { _, err := w.AddDomain("prj_a", world.NewDomain{Hostname: ptr("b.test")}); return err }},
		{"force domain", func() error {
			_, err := w.ForceDomainStatus("b.test", world.ForcedStatus{Status: ptr("active")})
			return err
		}},
		{"delete domain", func() error { _, err := w.DeleteDomain("prj_a", "b.test"); return err }},
		{"detach", func() error { _, err := w.Advance(5 * time.Second); return err }},
		{"force deployment", func() error {
			_, err := w.ForceDeploymentStatus(d.ID, world.ForcedStatus{Status: ptr("error")})
			return err
		}},
	}
	for _, st := range steps {
		before := w.Changes()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if w.Changes() == before {
			t.Errorf("%s changed the world without counting it", st.name)
		}
	}
	before := w.Changes()
	if err := w.RevokeToken("no-such-token"); err == nil {
		t.Fatal("an unknown token was revoked")
	}
	if w.Changes() != before {
		t.Error("a refused revoke counted as a change")
	}
}

// Minted tokens come from crypto/rand: a reset that replays the seeded id source does
// not replay them, and no deployment id equals a token's suffix.
func TestMintedTokensAreUnpredictable(t *testing.T) {
	w := newWorld(t, project())
	a, _ := w.MintToken(ptr("admin"))
	d, _ := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}})
	if err := w.Reset(); err != nil {
		t.Fatal(err)
	}
	b, _ := w.MintToken(ptr("admin"))
	if a.Token == b.Token {
		t.Fatalf("the same token was minted twice: %s", a.Token)
	}
	for _, tok := range []string{a.Token, b.Token} {
		if strings.HasSuffix(tok, strings.TrimPrefix(d.ID, "dpl_")) {
			t.Fatalf("token %s ends with deployment id %s", tok, d.ID)
		}
		if len(tok) < len("hostemu_admin_")+26 {
			t.Fatalf("token %s carries fewer than 128 random bits", tok)
		}
	}
}

// A hostname no domain can have is domain_not_found, and the answer names it as given.
func TestUnnormalizableDomainNamedInError(t *testing.T) {
	w := newWorld(t, project())
	const bad = "not a host!"
	check := func(what string, err error) {
		t.Helper()
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.DomainNotFound || !strings.Contains(e.Message, strconv.Quote(bad)) {
			t.Errorf("%s: %v, want domain_not_found naming %q", what, err, bad)
		}
	}
	_, err := w.Domain(bad)
	check("Domain", err)
	_, err = w.Await(context.Background(), world.AwaitRequest{Domain: ptr(bad), Status: ptr(state.StatusActive)})
	check("Await", err)
	_, err = w.ForceDomainStatus(bad, world.ForcedStatus{Status: ptr(state.StatusActive)})
	check("ForceDomainStatus", err)
}

// A create with wrong files names the first wrong path in path order, whatever the
// map's order; a good one is taken.
func TestCreateDeploymentNamesFirstWrongFile(t *testing.T) {
	w := newWorld(t, project())
	good := strings.Repeat("a", 64)
	for files, want := range map[string]string{
		`{"b.html":"x","a.html":"` + good + `","c.html":"y"}`: `the hash of "b.html"`,
		`{"z":"` + good + `","":"` + good + `"}`:              `an empty file path`,
		`{"a":"` + good + `","b":"A` + good[1:] + `"}`:        `the hash of "b"`,
	} {
		var m map[string]string
		if err := json.Unmarshal([]byte(files), &m); err != nil {
			t.Fatal(err)
		}
		for range 5 { // map order varies from one range to the next
			_, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: m})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %v, want %q", files, err, want)
			}
		}
	}
	if _, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{"a": good, "b": good}}); err != nil {
		t.Fatal(err)
	}
}
