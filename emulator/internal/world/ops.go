package world

import (
	"errors"
	"maps"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// MergeEnv is the project's environment with a deployment's overrides on top.
func MergeEnv(project, overrides map[string]string) map[string]string {
	out := make(map[string]string, len(project)+len(overrides))
	maps.Copy(out, project)
	maps.Copy(out, overrides)
	return out
}

// NewDeployment is a create-deployment request, as POST /v1/deployments takes it.
type NewDeployment struct {
	ProjectID *string           `json:"project_id"`
	Files     map[string]string `json:"files"`
	Target    *string           `json:"target"`
	Env       map[string]string `json:"env"`
}

// check validates the request's fields, naming the first one wrong, and returns its
// target and the state.EntryWeight of its files and env, summed as it walks them (a
// create's weight: state.NewDeploymentWeight).
func (in NewDeployment) check() (target string, entries int64, err error) {
	if in.ProjectID == nil || *in.ProjectID == "" {
		return "", 0, apperr.New(apperr.InvalidRequest, `field "project_id" is required`)
	}
	valid := in.Files != nil // none at all: FilesProblem says "required"
	for p, h := range in.Files {
		valid = valid && p != "" && state.ValidFileHash(h)
		entries += state.EntryWeight(p, h)
	}
	if !valid {
		return "", 0, apperr.New(apperr.InvalidRequest, state.FilesProblem(in.Files))
	}
	target = state.TargetPreview
	if in.Target != nil {
		target = *in.Target
		if target != state.TargetPreview && target != state.TargetProduction {
			return "", 0, apperr.Errorf(apperr.InvalidRequest, `field "target" must be "production" or "preview", not %q`, target)
		}
	}
	valid = true
	for k, v := range in.Env {
		valid = valid && state.ValidEnvName(k)
		entries += state.EntryWeight(k, v)
	}
	if !valid {
		return "", 0, apperr.New(apperr.InvalidRequest, state.EnvProblem(in.Env))
	}
	return target, entries, nil
}

// newDeploymentID stands for a new deployment's id (its length) in the weight charged.
const newDeploymentID = "dpl_xxxxxxxxxxxxxxxxxxxx"

// CreateDeployment creates a queued deployment and schedules its lifecycle under the
// active scenario. With strict uploads, file hashes never uploaded are missing_files.
func (w *World) CreateDeployment(in NewDeployment) (state.Deployment, error) {
	target, entries, err := in.check()
	if err != nil {
		return state.Deployment{}, err
	}
	w.fireDue()
	p, err := w.store.Project(*in.ProjectID)
	if err != nil {
		return state.Deployment{}, err
	}
	sc := w.Scenario()
	if sc.Uploads == scenario.UploadsStrict {
		if missing := w.store.MissingFiles(in.Files); len(missing) > 0 {
			return state.Deployment{}, &apperr.Error{Code: apperr.MissingFiles,
				Message: "upload the missing files with POST /v1/files, then create the deployment again", Missing: missing}
		}
	}
	now := w.clock.Now().Truncate(time.Millisecond)
	// the lifecycle's four log lines included
	// WeightOf(&state.Deployment{ID: newDeploymentID, URL: p.Name + ".hostemu.localhost",
	// Env: in.Env, Files: in.Files}), without building one to weigh
	if err := w.charge(state.NewDeploymentWeight(len(newDeploymentID), len(p.Name)+len(".hostemu.localhost"), entries) + 4*(state.WeightLogLine+64)); err != nil {
		return state.Deployment{}, err
	}
	var d state.Deployment
	var ref state.DeploymentRef
	for {
		id := w.newID("dpl_")
		d = state.Deployment{
			ID: id, ProjectID: p.ID, URL: state.DeploymentURL(p.Name, id, w.URLDomain(), w.urlForm), Target: target,
			CreatedAt: now, Env: in.Env, Files: in.Files,
		}
		d.SetStatus(nil, state.StatusQueued, nil, now) // gives Logs room for the lifecycle's lines
		var err error
		ref, err = w.store.CreateDeploymentRef(d)
		if err == nil {
			break
		}
		if !errors.Is(err, state.ErrIDTaken) { // an imported state may hold the id drawn
			return state.Deployment{}, err
		}
	}
	id := d.ID
	steps := w.deploymentSteps(sc, id, p.ID, target, p.Env, in.Env)
	w.scheduleDeployment(id, ref, state.StatusQueued, steps, now)
	w.emitDeployment("created", d)
	if i := stepIndex(steps, state.StatusQueued); i >= 0 && i+1 < len(steps) && steps[i+1].After <= 0 {
		w.fireDue() // zero-time steps happen at once
	}
	return d, nil
}

// CheckDigest checks an X-File-Digest header's form, so an upload can be refused
// before its body is read.
func CheckDigest(digest string) error {
	if !state.ValidFileHash(digest) {
		return apperr.New(apperr.DigestMismatch, "header X-File-Digest must be the SHA-256 of the body as 64 lowercase hex characters")
	}
	return nil
}

// UploadFile checks that body hashes to digest (the X-File-Digest header) and records
// the file.
func (w *World) UploadFile(digest string, body []byte) error {
	if err := CheckDigest(digest); err != nil {
		return err
	}
	if got, ok := edge.DigestIs(body, digest); !ok {
		return apperr.New(apperr.DigestMismatch, "the body's SHA-256 is "+got+", not the X-File-Digest "+digest)
	}
	if w.files.Has(digest) {
		return nil // stored already: nothing changes, and nothing is logged again
	}
	if err := w.charge(state.WeightOf(&digest)); err != nil {
		return err
	}
	if err := w.files.PutHashed(digest, body); errors.Is(err, edge.ErrStorageFull) {
		return apperr.Errorf(apperr.StorageFull, "the file store holds %d of its %d bytes (--file-store-size); this file of %d bytes does not fit", w.files.Used(), w.files.Limit(), len(body))
	} else if err != nil {
		return err
	}
	w.store.AddFile(digest, body)
	return nil
}

// Promote makes a ready deployment its project's production deployment.
func (w *World) Promote(id string) (projectID, previous string, err error) {
	w.fireDue()
	projectID, previous, rollback, err := w.store.Promote(id)
	if err == nil {
		via := "promote"
		if rollback {
			via = "rollback"
		}
		w.cov.Transition("deployment", state.StatusReady, "production", via)
		w.emitDeployment("promoted", state.Deployment{ID: id, ProjectID: projectID, Status: state.StatusReady})
	}
	return projectID, previous, err
}

// NewDomain is an add-domain request, as POST /v1/projects/{id}/domains takes it.
type NewDomain struct {
	Hostname   *string `json:"hostname"`
	RedirectTo *string `json:"redirect_to"`
}

// check validates and normalizes the request's hostnames.
func (in NewDomain) check(edgeDomain string) (host, redirect string, err error) {
	if in.Hostname == nil || *in.Hostname == "" {
		return "", "", apperr.New(apperr.InvalidRequest, `field "hostname" is required`)
	}
	host, ok := state.NormalizeHostname(*in.Hostname, true)
	if !ok {
		return "", "", apperr.Errorf(apperr.InvalidHostname, `field "hostname": %q is not a fully qualified domain name (a leading "*." is allowed)`, *in.Hostname)
	}
	if kept := state.KeptFor(host, edgeDomain); kept != "" {
		// The spec asks for a customer's FQDN (state.KeptFor says why not these).
		return "", "", apperr.Errorf(apperr.InvalidHostname, `field "hostname": %q is under %q, which hostemu keeps for itself; use a name under .test or .example`, *in.Hostname, kept)
	}
	if in.RedirectTo != nil { // "" too: no redirect is null, not an empty name
		if redirect, ok = state.NormalizeHostname(*in.RedirectTo, false); !ok {
			return "", "", apperr.Errorf(apperr.InvalidHostname, `field "redirect_to": %q is not a fully qualified domain name`, *in.RedirectTo)
		}
		switch self, kept := state.CheckRedirect(host, redirect, edgeDomain); {
		case self:
			return "", "", apperr.New(apperr.InvalidRequest, `field "redirect_to" must name another hostname than "hostname"`)
		case kept != "":
			return "", "", apperr.Errorf(apperr.InvalidHostname, `field "redirect_to": %q is under %q, which hostemu keeps for itself; redirect to a name under .test or .example`, *in.RedirectTo, kept)
		}
	}
	return host, redirect, nil
}

// AddDomain attaches a pending domain to a project and schedules its lifecycle.
func (w *World) AddDomain(projectID string, in NewDomain) (state.Domain, error) {
	host, redirect, err := in.check(w.EdgeDomain())
	if err != nil {
		return state.Domain{}, err
	}
	w.fireDue()
	sc := w.Scenario()
	now := w.clock.Now().Truncate(time.Millisecond)
	d := state.Domain{
		Hostname: host, ProjectID: projectID, Status: state.StatusPending,
		RedirectTo: redirect, CreatedAt: now, TLS: state.TLS{Status: state.TLSPending},
	}
	if err := w.charge(state.WeightOf(&d)); err != nil {
		return state.Domain{}, err
	}
	if err := w.store.AddDomain(d); err != nil {
		return state.Domain{}, err
	}
	w.end(kindCert, host)
	w.emitDomain("added", d)
	w.scheduleDomain(host, state.StatusPending, sc.DomainStepsFor(host, w.ruleDraw(domainKey(host))), sc.Certificates, now)
	w.fireDue()
	return d, nil
}

// DeleteDomain frees the hostname at once, revokes its certificate, and detaches it at
// the edge detachDelay later.
func (w *World) DeleteDomain(projectID, hostname string) (state.Domain, error) {
	w.fireDue()
	if _, err := w.store.Project(projectID); err != nil {
		return state.Domain{}, err
	}
	host, ok := state.NormalizeHostname(hostname, true)
	if !ok {
		return state.Domain{}, apperr.Errorf(apperr.DomainNotFound, "domain %q not found in project %q", hostname, projectID)
	}
	now := w.clock.Now()
	d, err := w.store.DeleteDomain(projectID, host, now, now.Add(detachDelay))
	if err != nil {
		return state.Domain{}, err
	}
	w.end(kindDomain, host)
	w.end(kindCert, host)
	w.scheduleDetach(host, now.Add(detachDelay))
	w.emitDomain("deleted", d)
	return d, nil
}

// ForcedStatus is a forced-status request of the control API: a status, and for
// error an optional {code, message} (else a default saying it was forced).
type ForcedStatus struct {
	Status *string          `json:"status"`
	Error  *state.ErrorInfo `json:"error"`
}

// forcedError is the error a forced error status reports.
func (f ForcedStatus) forcedError(defaultCode string) (*state.ErrorInfo, error) {
	if f.Error == nil {
		return &state.ErrorInfo{Code: defaultCode, Message: "status forced to error by the control API"}, nil
	}
	if !fault.ValidCode(f.Error.Code) {
		return nil, apperr.Errorf(apperr.InvalidRequest, `field "error.code" must be snake_case of at most 64 characters, not %q`, f.Error.Code)
	}
	if f.Error.Message == "" {
		return nil, apperr.New(apperr.InvalidRequest, `field "error.message" is required with "error"`)
	}
	return f.Error, nil
}

// ForceDeploymentStatus sets a deployment's status now; its scheduled steps are dropped.
func (w *World) ForceDeploymentStatus(id string, req ForcedStatus) (state.Deployment, error) {
	if req.Status == nil {
		return state.Deployment{}, apperr.New(apperr.InvalidRequest, `field "status" is required`)
	}
	status := *req.Status
	if !state.ValidDeploymentStatus(status) {
		return state.Deployment{}, statusProblem("deployment", &status, state.DeploymentStatuses...)
	}
	forced, err := req.forcedError(state.CodeBuildFailed)
	if err != nil {
		return state.Deployment{}, err
	}
	w.fireDue()
	var d state.Deployment
	var from string
	w.sched.Exclusive(func() { // no scheduled step can land between the two
		w.end(kindDeployment, id) // harmless for an id that does not exist
		now := w.clock.Now()
		d, err = w.store.UpdateDeployment(id, func(d *state.Deployment, p *state.Project) {
			from = d.Status
			d.SetStatus(p, status, forced, now)
		})
	})
	if err == nil {
		w.cov.Transition("deployment", from, status, "")
		w.emitDeployment("forced", d)
	}
	return d, err
}

// ForceDomainStatus sets a domain's status now (an active domain gets its certificate);
// its scheduled steps are dropped.
func (w *World) ForceDomainStatus(hostname string, req ForcedStatus) (state.Domain, error) {
	if req.Status == nil {
		return state.Domain{}, apperr.New(apperr.InvalidRequest, `field "status" is required`)
	}
	host, err := domainHost(hostname)
	if err != nil {
		return state.Domain{}, err
	}
	status := *req.Status
	if !state.ValidDomainStatus(status) {
		return state.Domain{}, statusProblem("domain", &status, state.DomainStatuses...)
	}
	forced, err := req.forcedError(state.CodeVerificationFailed)
	if err != nil {
		return state.Domain{}, err
	}
	w.fireDue()
	certs := w.Scenario().Certificates
	var d state.Domain
	var from state.Domain
	w.sched.Exclusive(func() { // no scheduled step can land between the two
		w.end(kindDomain, host) // harmless for a hostname that does not exist
		w.end(kindCert, host)
		now := w.clock.Now()
		d, err = w.store.UpdateDomain(host, func(d *state.Domain) {
			from = *d
			d.SetStatus(status, forced, certs, now)
		})
	})
	if err != nil {
		return d, err
	}
	w.countDomain(from, d)
	w.emitDomain("forced", d)
	if d.TLS.Status == state.TLSIssued {
		w.scheduleRenewal(host, *d.TLS.ExpiresAt, certs)
	}
	return d, nil
}
