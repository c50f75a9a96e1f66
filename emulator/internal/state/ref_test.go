package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// TestDeploymentRef: a ref changes the deployment its create stored, what a change by
// id then reads; once the store's tables are replaced (Load, reset), the ref is stale
// and the change goes to the deployment of that id in the new tables, or to none.
func TestDeploymentRef(t *testing.T) {
	s := world(t, 3)
	d := Deployment{Files: map[string]string{}, ID: "dpl_new1", ProjectID: "prj_a", Target: TargetPreview, CreatedAt: t0}
	d.SetStatus(nil, StatusQueued, nil, t0)
	ref, err := s.CreateDeploymentRef(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDeploymentRef(d); !errors.Is(err, ErrIDTaken) {
		t.Fatalf("the same id again: %v", err)
	}
	step := func(ref DeploymentRef, id, status string) (Deployment, error) {
		return s.UpdateDeploymentRef(ref, id, func(d *Deployment, p *Project) { d.SetStatus(p, status, nil, t0.Add(1e9)) })
	}
	if got, err := step(ref, "dpl_new1", StatusBuilding); err != nil || got.Status != StatusBuilding {
		t.Fatalf("by ref: %+v, %v", got, err)
	}
	if got, _, _ := s.Deployment("dpl_new1"); got.Status != StatusBuilding || len(got.Logs) != 3 {
		t.Fatalf("read by id after a change by ref: %s, %d lines", got.Status, len(got.Logs))
	}
	if got, err := step(DeploymentRef{}, "dpl_new1", StatusReady); err != nil || got.Status != StatusReady {
		t.Fatalf("the zero ref, by id: %+v, %v", got, err)
	}

	// the tables replaced by a state holding the same id: the stale ref changes that one
	snap := s.Export()
	if err := s.Load(snap); err != nil {
		t.Fatal(err)
	}
	if got, err := step(ref, "dpl_new1", StatusQueued); err != nil || got.Status != StatusQueued {
		t.Fatalf("stale ref, the id in the new tables: %+v, %v", got, err)
	}
	if ref.d.Status != StatusReady {
		t.Fatalf("the old tables' deployment was changed: %s", ref.d.Status)
	}
	// ... and one without it: not found, as by id
	s.reset()
	if _, err := step(ref, "dpl_new1", StatusBuilding); err == nil {
		t.Fatal("stale ref, the id gone: changed")
	} else if e, ok := apperr.As(err); !ok || e.Code != apperr.DeploymentNotFound {
		t.Fatalf("stale ref, the id gone: %v", err)
	}
}

// TestDeploymentRefRacesLoad: changes by ref, fresh and stale, while the tables are
// replaced again and again (a state that holds the deployment, one that does not):
// every change lands on the deployment the store's tables hold at that moment, never
// on one of tables replaced (run with -race).
func TestDeploymentRefRacesLoad(t *testing.T) {
	s := world(t, 3)
	without := s.Export()
	d := Deployment{Files: map[string]string{}, ID: "dpl_race", ProjectID: "prj_a", Target: TargetPreview, CreatedAt: t0}
	d.SetStatus(nil, StatusQueued, nil, t0)
	ref, err := s.CreateDeploymentRef(d)
	if err != nil {
		t.Fatal(err)
	}
	with := s.Export()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			snap := without
			if i%2 == 0 {
				snap = with
			}
			// Load takes the snapshot's arrays over: each load its own
			snap.Deployments = slices.Clone(snap.Deployments)
			snap.Domains = slices.Clone(snap.Domains)
			if err := s.Load(snap); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		r := ref
		if i%2 == 1 {
			r = DeploymentRef{}
		}
		s.UpdateDeploymentRef(r, "dpl_race", func(d *Deployment, p *Project) {
			// under the store's lock: the deployment changed is the tables' own
			if s.deployments["dpl_race"] != d {
				t.Errorf("change %d: a deployment the store's tables do not hold", i)
			}
			d.SetStatus(p, StatusBuilding, nil, t0.Add(1e9))
		})
	}
}
