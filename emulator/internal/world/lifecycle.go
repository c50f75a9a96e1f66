package world

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// detachDelay is how long after delete a hostname is detached at the edge.
const detachDelay = 5 * time.Second

// The kinds of lifecycle; a bundle names a lifecycle by its kind's prefix and the name
// ("dpl:<id>"). The lifecycles in flight of domains and certificates are kept in a map
// by name (w.runs); a deployment's are found through the scheduler, where each has
// its one pending step (a create's hot path then touches no map of lifecycles): a
// deployment's lifecycle is only ever ended by a forced status, and only replaced
// after the scheduler was cleared (a load).
const (
	kindDeployment = iota
	kindDomain
	kindCert
	kinds
)

var kindPrefix = [kinds]string{"dpl:", "dom:", "crt:"}

// run is a lifecycle in flight: the steps of a resource still to come, scheduled one at
// a time. Only its next step is pending in the scheduler; as it fires, it schedules the
// step after it in the place reserved for it when the lifecycle began, so the steps of
// every lifecycle fire in the order and at the instants they would have, had all been
// scheduled at once (the scheduler orders ties by place).
type run struct {
	w        *World
	kind     int
	name     string
	steps    []scenario.Step
	next     int       // the step pending in the scheduler
	at       time.Time // its instant (unclamped: the scheduler clamps)
	seq      uint64    // its place; step next+i has place seq+i
	inFlight bool      // an auto clock jumps to its steps (not a periodic renewal)
	ended    bool      // a deployment's lifecycle ended by a forced status (guarded by w.mu)
	// anchor is when the lifecycle entered its current step (guarded by w.mu): the
	// steps to come are scheduled from it, so a bundle's replay schedules them at the
	// same instants.
	anchor time.Time
	// apply makes the step happen; nil for a deployment's, which is stepDeployment.
	apply func(st scenario.Step, t time.Time)
	// ref is a deployment's in the store, when its create made it (stale after a load,
	// and zero for a lifecycle resumed from a state: then found by name)
	ref state.DeploymentRef
}

// Fire runs the pending step, if the lifecycle is still the resource's (a forced
// status or a reload ends it), after scheduling the next one in its place.
func (r *run) Fire(t time.Time) {
	w := r.w
	i := r.next
	if !w.anchor(r, r.at) {
		return
	}
	last := i == len(r.steps)-1
	if !last {
		r.next, r.at, r.seq = i+1, r.at.Add(r.steps[i+1].After), r.seq+1
		w.sched.AtSeq(r.at, r.seq, r, r.inFlight)
	}
	if r.apply == nil {
		w.stepDeployment(r.name, r.ref, r.steps[i], t)
	} else {
		r.apply(r.steps[i], t)
	}
	if last {
		w.forget(r)
	}
}

// anchor records that r entered a step at, if it is still its resource's lifecycle.
func (w *World) anchor(r *run, at time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.kind == kindDeployment && r.ended || r.kind != kindDeployment && w.runs[r.kind][r.name] != r {
		return false
	}
	r.anchor = at
	return true
}

// forget drops r once its last step ran, if it is still its resource's lifecycle: the
// maps hold lifecycles in flight only (a deployment's is in none).
func (w *World) forget(r *run) {
	if r.kind == kindDeployment {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs[r.kind][r.name] == r {
		delete(w.runs[r.kind], r.name)
	}
}

// end ends the lifecycle of a resource: its steps still pending do nothing. For a
// deployment, it must run inside w.sched.Exclusive (no step between being taken and
// firing escapes it); it looks through the pending steps.
func (w *World) end(kind int, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kind != kindDeployment {
		delete(w.runs[kind], name)
		return
	}
	w.sched.Tasks(func(t clock.Task) {
		if r, ok := t.(*run); ok && r.kind == kindDeployment && r.name == name {
			r.ended = true
		}
	})
}

// eachRun calls fn on every lifecycle in flight; call it inside w.sched.Exclusive,
// with w.mu held.
func (w *World) eachRun(fn func(*run)) {
	for _, m := range w.runs {
		for _, r := range m {
			fn(r)
		}
	}
	w.sched.Tasks(func(t clock.Task) {
		if r, ok := t.(*run); ok && r.kind == kindDeployment && !r.ended {
			fn(r)
		}
	})
}

// newRuns are empty maps of lifecycles in flight.
func newRuns() [kinds]map[string]*run {
	var m [kinds]map[string]*run
	for i := range m {
		m[i] = map[string]*run{}
	}
	return m
}

// scheduleSteps starts a lifecycle of the resource name: steps[from:], each After the
// previous one, counting from since. It replaces the resource's lifecycle in flight.
//
// The steps are in flight (an auto clock jumps to them when its world is idle) unless
// periodic says they are a periodic event, such as a renewal, that must never pull the
// clock forward on its own.
func (w *World) scheduleSteps(kind int, name string, steps []scenario.Step, from int, since time.Time, periodic bool, apply func(scenario.Step, time.Time)) {
	r := w.newRun(kind, name, steps, from, since, periodic)
	r.apply = apply
	w.start(r)
}

// newRun is the lifecycle of the resource name from steps[from], counting from since,
// its steps' places reserved in the scheduler (see scheduleSteps).
func (w *World) newRun(kind int, name string, steps []scenario.Step, from int, since time.Time, periodic bool) *run {
	return &run{w: w, kind: kind, name: name, steps: steps, next: from, at: since.Add(steps[from].After),
		seq: w.sched.Reserve(len(steps) - from), inFlight: !periodic, anchor: since}
}

// start schedules r's pending step, r replacing its resource's lifecycle in flight.
func (w *World) start(r *run) {
	if r.kind != kindDeployment {
		w.mu.Lock()
		w.runs[r.kind][r.name] = r
		w.mu.Unlock()
	}
	w.sched.AtSeq(r.at, r.seq, r, r.inFlight)
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

// scheduleDeployment schedules the rest of a deployment's lifecycle after its current
// status, counting from since; ref is the deployment's in the store, or zero.
func (w *World) scheduleDeployment(id string, ref state.DeploymentRef, current string, steps []scenario.Step, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	r := w.newRun(kindDeployment, id, steps, i+1, since, false)
	r.ref = ref
	w.start(r)
}

// stepDeployment moves deployment id (ref, unless stale or zero) to the step st at t.
func (w *World) stepDeployment(id string, ref state.DeploymentRef, st scenario.Step, t time.Time) {
	var from string
	d, err := w.store.UpdateDeploymentRef(ref, id, func(d *state.Deployment, p *state.Project) {
		from = d.Status
		d.SetStatus(p, st.Status, st.Error, t)
	})
	if err == nil {
		w.cov.Transition("deployment", from, d.Status, "")
		w.emitDeployment("status", d)
	}
}

// deploymentSteps is the lifecycle a deployment follows under sc: the first matching
// rule's, else the scenario's own. The merged environment and the rule's dice are made
// only when a rule may need them.
func (w *World) deploymentSteps(sc *scenario.Scenario, id, projectID, target string, projectEnv, env map[string]string) []scenario.Step {
	if len(sc.DeploymentRules) == 0 {
		return sc.DeploymentLifecycle
	}
	return sc.DeploymentStepsFor(projectID, target, MergeEnv(projectEnv, env), w.ruleDraw(id))
}

// scheduleDomain schedules the rest of a domain's lifecycle after its current status.
func (w *World) scheduleDomain(host, current string, steps []scenario.Step, certs scenario.Certificates, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	w.scheduleSteps(kindDomain, host, steps, i+1, since, false, func(st scenario.Step, t time.Time) {
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
	w.scheduleSteps(kindCert, host, renewalSteps, 0, expires.Add(-certs.RenewBefore), true, func(_ scenario.Step, t time.Time) {
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

// renewalSteps is a renewal's one step.
var renewalSteps = []scenario.Step{{}}

// The keys a bundle names lifecycles by.
func deploymentKey(id string) string { return kindPrefix[kindDeployment] + id }
func domainKey(host string) string   { return kindPrefix[kindDomain] + host }

// ruleDraw is the random source a deployment's when.probability rules draw from: seeded
// by the world's seed and the deployment's id, so a run with one --seed picks the same
// deployments, and a deployment resumed after a restart keeps its lifecycle.
func (w *World) ruleDraw(id string) func() float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(uint64(w.Seed()), h.Sum64())).Float64
}

// resume schedules what remains of every lifecycle in a freshly loaded state, under the
// active scenario, counting from its anchor in anchors (by "dpl:<id>", "dom:<host>")
// or else from now: builds in flight finish, domains verify, issued certificates
// renew, and deleted hostnames finish detaching.
func (w *World) resume(anchors map[string]time.Time) {
	sc := w.Scenario()
	now := w.clock.Now()
	since := func(key string) time.Time {
		if t, ok := anchors[key]; ok {
			return t
		}
		return now
	}
	deployments, domains, detaching := w.store.InFlight()
	for _, d := range deployments {
		w.scheduleDeployment(d.ID, state.DeploymentRef{}, d.Status, w.deploymentSteps(sc, d.ID, d.ProjectID, d.Target, w.store.ProjectEnv(d.ProjectID), d.Env), since(deploymentKey(d.ID)))
	}
	for _, d := range domains {
		switch {
		case d.Status == state.StatusPending || d.Status == state.StatusVerifying:
			w.scheduleDomain(d.Hostname, d.Status, sc.DomainStepsFor(d.Hostname, w.ruleDraw(domainKey(d.Hostname))), sc.Certificates, since(domainKey(d.Hostname)))
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
