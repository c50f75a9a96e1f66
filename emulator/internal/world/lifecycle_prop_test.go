package world_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// propScenario gives deployments lifecycles of different lengths and paces, on a 100 ms
// grid so that steps of different deployments often fall on one instant, with zero-time
// steps, an error step and production builds (whose ready moves the project's pointer).
const propScenario = `
name: prop
description: lifecycles that collide
deployments:
  lifecycle:
    - status: queued
    - status: building
      after: 500ms
    - status: ready
      after: 500ms
  rules:
    - when: {env: {SLOW: "1"}}
      lifecycle:
        - status: queued
        - status: building
          after: 1s
        - status: error
          after: 1s
          error: {code: build_failed, message: "exit 1"}
    - when: {env: {NOW: "1"}}
      lifecycle:
        - status: queued
        - status: building
          after: 0s
        - status: ready
          after: 300ms
    - when: {target: production}
      lifecycle:
        - status: queued
        - status: building
          after: 300ms
        - status: ready
          after: 700ms
`

// lifecycleOf is the lifecycle propScenario gives a deployment: the model's copy of it.
func lifecycleOf(target string, env map[string]string) []scenario.Step {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	switch {
	case env["SLOW"] == "1":
		return []scenario.Step{{Status: "queued"}, {Status: "building", After: ms(1000)}, {Status: "error", After: ms(1000), Error: &state.ErrorInfo{Code: "build_failed", Message: "exit 1"}}}
	case env["NOW"] == "1":
		return []scenario.Step{{Status: "queued"}, {Status: "building"}, {Status: "ready", After: ms(300)}}
	case target == state.TargetProduction:
		return []scenario.Step{{Status: "queued"}, {Status: "building", After: ms(300)}, {Status: "ready", After: ms(700)}}
	}
	return []scenario.Step{{Status: "queued"}, {Status: "building", After: ms(500)}, {Status: "ready", After: ms(500)}}
}

// model is what the documented lifecycle makes of a script: every step of a deployment
// scheduled when it is created, at its instant; steps at one instant in the order they
// were scheduled; a forced status ends what remains.
type model struct {
	now     time.Time
	deps    map[string]*state.Deployment
	project state.Project
	pending []pendingStep
	seq     int
	events  []world.DeploymentEvent
	anchors map[string]time.Time // when each deployment entered its current step
}

type pendingStep struct {
	at  time.Time
	seq int
	id  string
	st  scenario.Step
}

func (m *model) fire(until time.Time) {
	for {
		slices.SortStableFunc(m.pending, func(a, b pendingStep) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
		if len(m.pending) == 0 || m.pending[0].at.After(until) {
			return
		}
		p := m.pending[0]
		m.pending = m.pending[1:]
		if p.at.After(m.now) {
			m.now = p.at
		}
		d := m.deps[p.id]
		d.SetStatus(&m.project, p.st.Status, p.st.Error, p.at)
		m.anchors[p.id] = p.at
		m.events = append(m.events, world.DeploymentEvent{Change: "status", ID: d.ID, ProjectID: d.ProjectID, Status: d.Status, Error: d.Error, At: state.Timestamp(m.now)})
	}
}

// TestLifecyclesFollowTheirSchedule runs random scripts of creates, advances, forced
// statuses, reads and captures on a manual clock, and holds the world to the model:
// every deployment's status, timings, error, build logs and production pointer after
// each operation, the deployment events in their order, and a capture's lifecycles in
// flight with their anchors (what a failure bundle's replay resumes from). The world schedules a
// lifecycle's steps one at a time (in places reserved at its start); the model
// schedules all of them at once, as the documented behaviour reads.
func TestLifecyclesFollowTheirSchedule(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { lifecycleScript(t, seed) })
	}
}

func lifecycleScript(t *testing.T, seed uint64) {
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if problems := reg.AddInline("prop.yaml", []byte(propScenario)); len(problems) > 0 {
		t.Fatal(problems)
	}
	snap := project()
	w, err := world.New(world.Config{ClockMode: clock.Manual, ClockStart: t0, Scenarios: reg, Scenario: "prop",
		Fixtures: func() (state.Snapshot, error) { return snap, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sub := w.Events().Subscribe(world.EventDeployment)
	defer w.Events().Unsubscribe(sub)

	m := &model{now: t0, deps: map[string]*state.Deployment{}, project: snap.Projects[0], anchors: map[string]time.Time{}}
	r := rand.New(rand.NewPCG(seed, 7))
	var ids []string
	var got []world.DeploymentEvent // read after each operation: the buffer is bounded
	for op := range 150 {
		switch k := r.IntN(11); {
		case k < 4: // a create
			target := state.TargetPreview
			if r.IntN(3) == 0 {
				target = state.TargetProduction
			}
			env := map[string]string{}
			switch r.IntN(4) {
			case 0:
				env["SLOW"] = "1"
			case 1:
				env["NOW"] = "1"
			}
			files := map[string]string{"index.html": fmt.Sprintf("%064x", r.IntN(3))}
			d, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: files, Target: &target, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
			md := &state.Deployment{ID: d.ID, ProjectID: "prj_a", URL: d.URL, Target: target, CreatedAt: m.now, Env: env, Files: files}
			md.SetStatus(nil, state.StatusQueued, nil, m.now)
			m.deps[d.ID] = md
			m.anchors[d.ID] = m.now
			m.events = append(m.events, world.DeploymentEvent{Change: "created", ID: d.ID, ProjectID: "prj_a", Status: "queued", At: state.Timestamp(m.now)})
			at := m.now
			for _, st := range lifecycleOf(target, env)[1:] {
				at = at.Add(st.After)
				m.seq++
				m.pending = append(m.pending, pendingStep{at: at, seq: m.seq, id: d.ID, st: st})
			}
			m.fire(m.now) // zero-time steps happen at once
		case k < 8: // an advance: on the grid, or off it by some milliseconds
			by := time.Duration(r.IntN(12)) * 100 * time.Millisecond
			if r.IntN(3) == 0 {
				by += time.Duration(r.IntN(100)) * time.Millisecond
			}
			if _, err := w.Advance(by); err != nil {
				t.Fatal(err)
			}
			target := m.now.Add(by)
			m.fire(target)
			m.now = target
		case k < 9 && len(ids) > 0: // a forced status ends the lifecycle
			id := ids[r.IntN(len(ids))]
			status := []string{state.StatusQueued, state.StatusBuilding, state.StatusReady, state.StatusError}[r.IntN(4)]
			d, err := w.ForceDeploymentStatus(id, world.ForcedStatus{Status: &status})
			if err != nil {
				t.Fatal(err)
			}
			m.pending = slices.DeleteFunc(m.pending, func(p pendingStep) bool { return p.id == id })
			md := m.deps[id]
			md.SetStatus(&m.project, status, d.Error, m.now) // the forced error's text is not the subject here
			m.events = append(m.events, world.DeploymentEvent{Change: "forced", ID: id, ProjectID: "prj_a", Status: status, Error: md.Error, At: state.Timestamp(m.now)})
			if d.Status != status {
				t.Fatalf("op %d: forced %s, got %s", op, status, d.Status)
			}
		case k < 9: // a list, which runs what is due first
			if _, _, err := w.Deployments(state.DeploymentQuery{ProjectID: "prj_a", Limit: 100}); err != nil {
				t.Fatal(err)
			}
		default: // a failure bundle's lifecycles: when each in flight entered its step
			_, rec := w.Capture()
			want := map[string]time.Time{}
			for _, p := range m.pending {
				want["dpl:"+p.id] = m.anchors[p.id]
			}
			if !reflect.DeepEqual(rec.Lifecycles, want) {
				t.Fatalf("op %d: lifecycles %v, want %v", op, rec.Lifecycles, want)
			}
		}
		for _, ev := range drain(sub) {
			var de world.DeploymentEvent
			if err := json.Unmarshal(ev.Data, &de); err != nil {
				t.Fatal(err)
			}
			got = append(got, de)
		}
		for _, id := range ids {
			d, _, production, err := w.Deployment(id)
			if err != nil {
				t.Fatal(err)
			}
			want := m.deps[id]
			if !reflect.DeepEqual(d.Timings, want.Timings) || d.Status != want.Status || !reflect.DeepEqual(d.Error, want.Error) ||
				!reflect.DeepEqual(d.Logs, want.Logs) || production != (m.project.ProductionDeploymentID == id) {
				t.Fatalf("op %d, %s:\n got %s %+v %+v logs %+v production %v\nwant %s %+v %+v logs %+v production %v", op, id,
					d.Status, d.Timings, d.Error, d.Logs, production, want.Status, want.Timings, want.Error, want.Logs, m.project.ProductionDeploymentID == id)
			}
		}
	}
	if len(got) != len(m.events) {
		t.Fatalf("%d deployment events, want %d", len(got), len(m.events))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], m.events[i]) {
			t.Fatalf("event %d: got %+v, want %+v", i, got[i], m.events[i])
		}
	}
}
