package world

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// detachDelay is how long after delete a hostname is detached at the edge.
const detachDelay = 5 * time.Second

// begin starts a new lifecycle generation for a resource key; events of an older
// generation do nothing when they fire.
func (w *World) begin(key string, since time.Time) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextGen++
	w.gens[key] = w.nextGen
	w.anchors[key] = since
	return w.nextGen
}

// anchor records that the lifecycle key entered a step at, if gen is still its
// generation.
func (w *World) anchor(key string, gen uint64, at time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gens[key] != gen {
		return false
	}
	w.anchors[key] = at
	return true
}

// anchorOf is when the lifecycle key entered its current step, else now.
func (w *World) anchorOf(key string, now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.anchors[key]; ok {
		return t
	}
	return now
}

// forget drops the lifecycle key's generation and anchor once its last step ran, if
// gen is still its generation: the maps hold lifecycles in flight only.
func (w *World) forget(key string, gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gens[key] == gen {
		delete(w.gens, key)
		delete(w.anchors, key)
	}
}

func (w *World) end(key string) {
	w.mu.Lock()
	delete(w.gens, key)
	delete(w.anchors, key)
	w.mu.Unlock()
}

// scheduleSteps schedules steps[from:] of a lifecycle, each After the previous one,
// counting from since.
//
// The steps are in flight (an auto clock jumps to them when its world is idle) unless
// periodic says they are a periodic event, such as a renewal, that must never pull the
// clock forward on its own.
func (w *World) scheduleSteps(key string, steps []scenario.Step, from int, since time.Time, periodic bool, apply func(scenario.Step, time.Time)) {
	gen := w.begin(key, since)
	at := since
	schedule := w.sched.AtInFlight
	if periodic {
		schedule = w.sched.At
	}
	for i, st := range steps[from:] {
		at = at.Add(st.After)
		last, stepAt := from+i == len(steps)-1, at
		schedule(at, func(t time.Time) {
			if w.anchor(key, gen, stepAt) {
				apply(st, t)
				if last {
					w.forget(key, gen)
				}
			}
		})
	}
}

// stepIndex is the index of status in steps, or -1.
func stepIndex(steps []scenario.Step, status string) int {
	for i, st := range steps {
		if st.Status == status {
			return i
		}
	}
	return -1
}

func deploymentKey(id string) string { return "dpl:" + id }
func domainKey(host string) string   { return "dom:" + host }
func certKey(host string) string     { return "crt:" + host }

// scheduleDeployment schedules the rest of a deployment's lifecycle after its current
// status, counting from since.
func (w *World) scheduleDeployment(id, current string, steps []scenario.Step, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	w.scheduleSteps(deploymentKey(id), steps, i+1, since, false, func(st scenario.Step, t time.Time) {
		var from string
		d, err := w.store.UpdateDeployment(id, func(d *state.Deployment, p *state.Project) {
			from = d.Status
			d.SetStatus(p, st.Status, st.Error, t)
		})
		if err == nil {
			w.cov.Transition("deployment", from, d.Status, "")
			w.emitDeployment("status", d)
		}
	})
}

// scheduleDomain schedules the rest of a domain's lifecycle after its current status.
func (w *World) scheduleDomain(host, current string, steps []scenario.Step, certs scenario.Certificates, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	w.scheduleSteps(domainKey(host), steps, i+1, since, false, func(st scenario.Step, t time.Time) {
		var from state.Domain
		d, err := w.store.UpdateDomain(host, func(d *state.Domain) {
			from = *d
			d.SetStatus(st.Status, st.Error, certs, t)
		})
		if err == nil {
			w.countDomain(from, d)
			w.emitDomain("status", d)
		}
		if err == nil && d.TLS.Status == state.TLSIssued {
			w.scheduleRenewal(host, *d.TLS.ExpiresAt, certs)
		}
	})
}

// scheduleRenewal renews an issued certificate renew_before its expiry: expires_at
// moves forward by valid_for from the renewal, and the next renewal is scheduled.
func (w *World) scheduleRenewal(host string, expires time.Time, certs scenario.Certificates) {
	if certs.ValidFor <= 0 || certs.RenewBefore >= certs.ValidFor {
		return
	}
	w.scheduleSteps(certKey(host), []scenario.Step{{}}, 0, expires.Add(-certs.RenewBefore), true, func(_ scenario.Step, t time.Time) {
		var before string
		d, err := w.store.UpdateDomain(host, func(d *state.Domain) {
			before = d.TLS.Status
			switch {
			case d.TLS.Status != state.TLSIssued:
			case certs.RenewalFails:
				d.FailRenewal()
			default:
				d.Issue(certs, t)
			}
		})
		if err == nil && before == state.TLSIssued {
			w.cov.Transition("certificate", before, d.TLS.Status, "renewal")
		}
		if err == nil && certs.RenewalFails && d.TLS.Status == state.TLSError {
			w.emitRenewalFailed(d, certs.RenewalError)
			return
		}
		if err == nil && d.TLS.Status == state.TLSIssued {
			w.scheduleRenewal(host, *d.TLS.ExpiresAt, certs)
		}
	})
}

// ruleDraw is the random source a deployment's when.probability rules draw from: seeded
// by the world's seed and the deployment's id, so a run with one --seed picks the same
// deployments, and a deployment resumed after a restart keeps its lifecycle.
func (w *World) ruleDraw(id string) func() float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(uint64(w.Seed()), h.Sum64())).Float64
}

// resume schedules what remains of every lifecycle in a freshly loaded state, under the
// active scenario, counting from now: builds in flight finish, domains verify, issued
// certificates renew, and deleted hostnames finish detaching.
func (w *World) resume() {
	sc := w.Scenario()
	now := w.clock.Now()
	deployments, domains, detaching := w.store.InFlight()
	for _, d := range deployments {
		w.scheduleDeployment(d.ID, d.Status, sc.DeploymentStepsFor(d.ProjectID, d.Target, MergeEnv(w.store.ProjectEnv(d.ProjectID), d.Env), w.ruleDraw(d.ID)), w.anchorOf(deploymentKey(d.ID), now))
	}
	for _, d := range domains {
		switch {
		case d.Status == state.StatusPending || d.Status == state.StatusVerifying:
			w.scheduleDomain(d.Hostname, d.Status, sc.DomainStepsFor(d.Hostname, w.ruleDraw(domainKey(d.Hostname))), sc.Certificates, w.anchorOf(domainKey(d.Hostname), now))
		case d.TLS.Status == state.TLSIssued && d.TLS.ExpiresAt != nil:
			w.scheduleRenewal(d.Hostname, *d.TLS.ExpiresAt, sc.Certificates)
		}
	}
	for _, dt := range detaching {
		w.scheduleDetach(dt.Hostname, dt.DetachAt)
	}
}

func (w *World) scheduleDetach(host string, at time.Time) {
	w.sched.At(at, func(t time.Time) {
		w.store.Detached(host, t)
		w.emitDomain("detached", state.Domain{Hostname: host})
		w.log.Debug("domain detached at the edge", "hostname", host)
	})
}

// countDomain counts a domain's change in coverage: its status edge, and its
// certificate's issue when it went active.
func (w *World) countDomain(from, to state.Domain) {
	if from.Status != to.Status {
		w.cov.Transition("domain", from.Status, to.Status, "")
	}
	if from.TLS.Status != state.TLSIssued && to.TLS.Status == state.TLSIssued {
		w.cov.Transition("certificate", state.TLSPending, state.TLSIssued, "issue")
	}
}
