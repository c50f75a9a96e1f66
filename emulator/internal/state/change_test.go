package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every mutator hands its change to the hook, and replaying the changes, in order and
// through JSON as the --state log keeps them, onto the state before them gives the
// state after them: nothing is missed, and order matters where it should.
func TestReplayOfHookedChangesGivesTheState(t *testing.T) {
	s := world(t, 50)
	before := s.Export()
	var log []Change
	s.SetHook(func(c Change) {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Change
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		back.Seq = c.Seq
		log = append(log, back)
	})
	r := rand.New(rand.NewPCG(3, 4))
	at := t0.Add(time.Hour)
	for i := range 2000 {
		id := fmt.Sprintf("dpl_%04d", r.IntN(60))
		host := fmt.Sprintf("h%d.test", r.IntN(20))
		switch r.IntN(9) {
		case 0:
			s.CreateDeployment(Deployment{Files: map[string]string{}, ID: id, ProjectID: "prj_a", Status: StatusQueued, CreatedAt: at.Add(time.Duration(i) * time.Millisecond)})
		case 1:
			s.UpdateDeployment(id, func(d *Deployment, p *Project) {
				d.Status = StatusReady
				d.Logs = append(d.Logs, LogLine{CreatedAt: at, Text: fmt.Sprint(i)})
				switch r.IntN(3) {
				case 0:
					p.ProductionDeploymentID = ""
				case 1:
					p.ProductionDeploymentID = id
				}
			})
		case 2:
			s.Promote(id)
		case 3:
			s.AddDomain(Domain{Hostname: host, ProjectID: "prj_b", Status: StatusPending, CreatedAt: at})
		case 4:
			s.UpdateDomain(host, func(d *Domain) { d.Status = StatusActive })
		case 5:
			s.DeleteDomain("prj_b", host, at, at.Add(time.Duration(i)*time.Second))
		case 6:
			s.Detached(host, at.Add(time.Duration(r.IntN(2000))*time.Second))
		case 7:
			tok := fmt.Sprintf("tok%d", r.IntN(10))
			if r.IntN(2) == 0 {
				s.AddToken(Token{Token: tok, Scope: ScopeRead})
			} else {
				s.RevokeToken(tok)
			}
		case 8:
			s.AddFile(fmt.Sprintf("%064d", r.IntN(30)), nil)
		}
	}
	for i := 1; i < len(log); i++ {
		if log[i].Seq != log[i-1].Seq+1 {
			t.Fatalf("change %d has seq %d after %d", i, log[i].Seq, log[i-1].Seq)
		}
	}
	if got, want := normal(t, Replay(jsonCopy(t, before), log)), normal(t, s.Export()); !reflect.DeepEqual(got, want) {
		t.Fatal("replayed state differs from the state")
	}
	// replaying a prefix again (a crash between a snapshot and the cut of the log)
	// changes nothing
	again := Replay(jsonCopy(t, s.Export()), log[len(log)/2:])
	if !reflect.DeepEqual(normal(t, again), normal(t, s.Export())) {
		t.Fatal("replaying changes the state already holds changed it")
	}
}

// normal is snap through JSON with its lists in one order (Export lists newest first,
// Replay in no particular order).
func normal(t *testing.T, snap Snapshot) Snapshot {
	snap = jsonCopy(t, snap)
	slices.SortFunc(snap.Projects, func(a, b Project) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(snap.Deployments, func(a, b Deployment) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(snap.Domains, func(a, b Domain) int { return strings.Compare(a.Hostname, b.Hostname) })
	return snap
}

func jsonCopy(t *testing.T, snap Snapshot) Snapshot {
	t.Helper()
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var out Snapshot
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A deployment's step hands the hook its project only when the step moved the
// project's production pointer (a production deployment ready, or built again): the
// --state log then writes a preview's steps without their project.
func TestDeploymentStepCarriesItsProjectOnlyWhenItMoved(t *testing.T) {
	s := world(t, 0)
	var got []Change
	s.SetHook(func(c Change) { got = append(got, c) })
	for _, id := range []string{"dpl_prev", "dpl_prod"} {
		target := TargetPreview
		if id == "dpl_prod" {
			target = TargetProduction
		}
		d := Deployment{Files: map[string]string{}, ID: id, ProjectID: "prj_a", Target: target, CreatedAt: t0}
		d.SetStatus(nil, StatusQueued, nil, t0)
		if _, err := s.CreateDeploymentRef(d); err != nil {
			t.Fatal(err)
		}
	}
	step := func(id, status string) *Project {
		t.Helper()
		got = got[:0]
		if _, err := s.UpdateDeployment(id, func(d *Deployment, p *Project) { d.SetStatus(p, status, nil, t0) }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Deployment == nil || got[0].Deployment.Status != status {
			t.Fatalf("%s to %s: changes %+v", id, status, got)
		}
		return got[0].Project
	}
	for _, c := range []struct {
		id, status, production string // production: the pointer the change carries ("-": no project)
	}{
		{"dpl_prev", StatusBuilding, "-"},
		{"dpl_prev", StatusReady, "-"},
		{"dpl_prod", StatusBuilding, "-"},
		{"dpl_prod", StatusReady, "dpl_prod"},
		{"dpl_prev", StatusQueued, "-"},
		{"dpl_prod", StatusReady, "-"}, // already the production deployment
		{"dpl_prod", StatusQueued, ""}, // built again: serves nothing
	} {
		p := step(c.id, c.status)
		switch {
		case c.production == "-" && p != nil:
			t.Errorf("%s to %s: the change carries the project %+v, which did not change", c.id, c.status, *p)
		case c.production != "-" && p == nil:
			t.Errorf("%s to %s: the change lacks the project, whose production pointer moved", c.id, c.status)
		case p != nil && (p.ID != "prj_a" || p.ProductionDeploymentID != c.production):
			t.Errorf("%s to %s: project %+v, want prj_a with production %q", c.id, c.status, *p, c.production)
		}
	}
}

// A deployment's step (SetStatus, what every caller of UpdateDeployment runs: the
// lifecycle, a forced status) changes no field of its project but the production
// pointer, whatever the step, the target and where the pointer was: the change of a
// step that left the pointer carries no project, and a log replayed loses nothing.
func TestStepChangesOnlyTheProjectsProductionPointer(t *testing.T) {
	statuses := []string{StatusQueued, StatusBuilding, StatusReady, StatusError}
	for _, target := range []string{TargetProduction, TargetPreview} {
		for _, from := range statuses {
			for _, to := range statuses {
				for _, production := range []string{"", "dpl_a", "dpl_other"} {
					d := Deployment{Files: map[string]string{}, ID: "dpl_a", ProjectID: "prj_a", Target: target, CreatedAt: t0}
					d.SetStatus(nil, from, nil, t0)
					p := Project{ID: "prj_a", Name: "a", CreatedAt: t0, Env: map[string]string{"K": "v"}, ProductionDeploymentID: production}
					want := p
					want.Env = map[string]string{"K": "v"}
					d.SetStatus(&p, to, &ErrorInfo{Code: "x", Message: "y"}, t0.Add(time.Second))
					p.ProductionDeploymentID = production
					if !reflect.DeepEqual(p, want) {
						t.Errorf("%s %s to %s (production %q): project %+v, want %+v but for its production pointer", target, from, to, production, p, want)
					}
				}
			}
		}
	}
}

// A change's project keeps the env it was recorded with: the --state log's writer
// encodes a record after the store's lock is released, while the store goes on. A
// project's Env is replaced whole (a Load clones it), never written in place, so the
// record shares the live map safely and copies nothing. Every operation that hands
// the hook a project, and a Load giving the project another env, run here while a
// reader encodes the records as the writer does (run with -race: a write in place to
// a map a record shares is a race with that reader, and an encoding that changed).
func TestRecordedProjectKeepsItsEnv(t *testing.T) {
	at := t0
	snapWith := func(v string) Snapshot {
		d := Deployment{Files: map[string]string{}, ID: "dpl_a", ProjectID: "prj_a", Target: TargetProduction, CreatedAt: at}
		d.SetStatus(nil, StatusReady, nil, at)
		return Snapshot{Projects: []Project{{ID: "prj_a", Name: "a", CreatedAt: at, Env: map[string]string{"K": v}}},
			Deployments: []Deployment{d}}
	}
	s := New()
	records := make(chan Change, 1024)
	s.SetHook(func(c Change) {
		if c.Project != nil {
			records <- c
		}
	})
	type encoded struct {
		env  string
		text []byte
	}
	done := make(chan []encoded)
	go func() { // the writer: encodes each record once the store has moved on
		var out []encoded
		for c := range records {
			b, err := c.Project.MarshalJSON()
			if err != nil {
				t.Error(err)
			}
			out = append(out, encoded{c.Project.Env["K"], b})
		}
		done <- out
	}()
	var want []string // the env each record had when it was made
	for i := range 50 {
		v := fmt.Sprint("v", i)
		if err := s.Load(snapWith(v)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.Promote("dpl_a"); err != nil { // a record with the project
			t.Fatal(err)
		}
		want = append(want, v)
		d := Deployment{Files: map[string]string{}, ID: fmt.Sprint("dpl_b", i), ProjectID: "prj_a", Target: TargetProduction, CreatedAt: at}
		d.SetStatus(nil, StatusQueued, nil, at)
		if err := s.CreateDeployment(d); err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{StatusBuilding, StatusReady} { // ready moves production: a record
			if _, err := s.UpdateDeployment(d.ID, func(d *Deployment, p *Project) { d.SetStatus(p, st, nil, at) }); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, v)
	}
	close(records)
	got := <-done
	if len(got) != len(want) {
		t.Fatalf("%d records of the project, want %d", len(got), len(want))
	}
	for i, g := range got {
		if g.env != want[i] || !strings.Contains(string(g.text), `"env":{"K":"`+want[i]+`"}`) {
			t.Fatalf("record %d: env %q, encoded %s; it was recorded with K=%s", i, g.env, g.text, want[i])
		}
	}
}
