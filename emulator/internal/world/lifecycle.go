package world

import (
	"slices"
	"strconv"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Default error codes of lifecycle error steps without their own.
const (
	CodeBuildFailed        = "build_failed"
	CodeVerificationFailed = "verification_failed"
)

// detachDelay is how long after delete a hostname is detached at the edge.
const detachDelay = 5 * time.Second

// begin starts a new lifecycle generation for a resource key; events of an older
// generation do nothing when they fire.
func (w *World) begin(key string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextGen++
	w.gens[key] = w.nextGen
	return w.nextGen
}

func (w *World) current(key string, gen uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gens[key] == gen
}

func (w *World) end(key string) {
	w.mu.Lock()
	delete(w.gens, key)
	w.mu.Unlock()
}

// scheduleSteps schedules steps[from:] of a lifecycle, each After the previous one,
// counting from since.
func (w *World) scheduleSteps(key string, steps []scenario.Step, from int, since time.Time, apply func(scenario.Step, time.Time)) {
	gen := w.begin(key)
	at := since
	for _, st := range steps[from:] {
		at = at.Add(st.After)
		w.sched.At(at, func(t time.Time) {
			if w.current(key, gen) {
				apply(st, t)
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

// setDeploymentStatus moves a deployment to status at t: timings, logs, the error, and
// for a production-target deployment turning ready, the project's production pointer.
func setDeploymentStatus(d *state.Deployment, p *state.Project, status string, e *scenario.StepError, t time.Time) {
	d.Status = status
	d.Logs = slices.Grow(d.Logs, 2) // a lifecycle's lines in one allocation, not one per step
	tt := t
	switch status {
	case state.StatusQueued:
		d.Timings.QueuedAt = &tt
		d.Logs = append(d.Logs, state.LogLine{CreatedAt: t, Text: "Deployment queued"})
	case state.StatusBuilding:
		d.Timings.BuildingAt = &tt
		d.Logs = append(d.Logs,
			state.LogLine{CreatedAt: t, Text: "Building " + d.ID + " (" + strconv.Itoa(len(d.Files)) + " files)"},
			state.LogLine{CreatedAt: t, Text: "Running build command"})
	case state.StatusReady:
		d.Timings.ReadyAt = &tt
		d.Error = nil
		d.Logs = append(d.Logs, state.LogLine{CreatedAt: t, Text: "Build completed; deployment ready at " + d.URL})
		if d.Target == state.TargetProduction && p != nil {
			p.ProductionDeploymentID = d.ID
		}
	case state.StatusError:
		d.Timings.ErrorAt = &tt
		info := &state.ErrorInfo{Code: CodeBuildFailed, Message: "the build failed"}
		if e != nil {
			info = &state.ErrorInfo{Code: e.Code, Message: e.Message}
		}
		d.Error = info
		d.Logs = append(d.Logs, state.LogLine{CreatedAt: t, Text: "Error: " + info.Message + " (" + info.Code + ")"})
	}
}

// scheduleDeployment schedules the rest of a deployment's lifecycle after its current
// status, counting from since.
func (w *World) scheduleDeployment(id, current string, steps []scenario.Step, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	w.scheduleSteps(deploymentKey(id), steps, i+1, since, func(st scenario.Step, t time.Time) {
		w.store.UpdateDeployment(id, func(d *state.Deployment, p *state.Project) {
			setDeploymentStatus(d, p, st.Status, st.Error, t)
		})
	})
}

// setDomainStatus moves a domain to status at t, with its certificate.
func setDomainStatus(d *state.Domain, status string, e *scenario.StepError, certs scenario.Certificates, t time.Time) {
	d.Status = status
	switch status {
	case state.StatusPending, state.StatusVerifying:
		d.Error = nil
		d.TLS = state.TLS{Status: state.TLSPending}
	case state.StatusActive:
		d.Error = nil
		if d.TLS.Status != state.TLSIssued {
			issue(d, certs, t)
		}
	case state.StatusError:
		info := &state.ErrorInfo{Code: CodeVerificationFailed, Message: "DNS records for " + d.Hostname + " could not be verified"}
		if e != nil {
			info = &state.ErrorInfo{Code: e.Code, Message: e.Message}
		}
		d.Error = info
		d.TLS = state.TLS{Status: state.TLSError}
	}
}

func issue(d *state.Domain, certs scenario.Certificates, t time.Time) {
	exp := t.Add(certs.ValidFor)
	issuer := certs.Issuer
	d.TLS = state.TLS{Status: state.TLSIssued, ExpiresAt: &exp, Issuer: &issuer}
}

// scheduleDomain schedules the rest of a domain's lifecycle after its current status.
func (w *World) scheduleDomain(host, current string, steps []scenario.Step, certs scenario.Certificates, since time.Time) {
	i := stepIndex(steps, current)
	if i < 0 || i == len(steps)-1 {
		return
	}
	w.scheduleSteps(domainKey(host), steps, i+1, since, func(st scenario.Step, t time.Time) {
		d, err := w.store.UpdateDomain(host, func(d *state.Domain) { setDomainStatus(d, st.Status, st.Error, certs, t) })
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
	w.scheduleSteps(certKey(host), []scenario.Step{{}}, 0, expires.Add(-certs.RenewBefore), func(_ scenario.Step, t time.Time) {
		d, err := w.store.UpdateDomain(host, func(d *state.Domain) {
			if d.TLS.Status == state.TLSIssued {
				issue(d, certs, t)
			}
		})
		if err == nil && d.TLS.Status == state.TLSIssued {
			w.scheduleRenewal(host, *d.TLS.ExpiresAt, certs)
		}
	})
}

// resume schedules what remains of every lifecycle in a freshly loaded state, under the
// active scenario, counting from now: builds in flight finish, domains verify, issued
// certificates renew, and deleted hostnames finish detaching.
func (w *World) resume() {
	sc := w.Scenario()
	now := w.clock.Now()
	deployments, domains, detaching := w.store.InFlight()
	for _, d := range deployments {
		w.scheduleDeployment(d.ID, d.Status, sc.DeploymentSteps(d.ProjectID, d.Target, MergeEnv(w.store.ProjectEnv(d.ProjectID), d.Env)), now)
	}
	for _, d := range domains {
		switch {
		case d.Status == state.StatusPending || d.Status == state.StatusVerifying:
			w.scheduleDomain(d.Hostname, d.Status, sc.DomainSteps(d.Hostname), sc.Certificates, now)
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
		w.log.Debug("domain detached at the edge", "hostname", host)
	})
}
