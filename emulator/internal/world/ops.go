package world

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
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

// NewDeployment is a validated create-deployment request.
type NewDeployment struct {
	ProjectID string
	Files     map[string]string
	Target    string
	Env       map[string]string
}

// CreateDeployment creates a queued deployment and schedules its lifecycle under the
// active scenario. With strict uploads, file hashes never uploaded are missing_files.
func (w *World) CreateDeployment(in NewDeployment) (state.Deployment, error) {
	p, err := w.Store.Project(in.ProjectID)
	if err != nil {
		return state.Deployment{}, err
	}
	sc := w.Scenario()
	if sc.Uploads == scenario.UploadsStrict {
		if missing := w.missingFiles(in.Files); len(missing) > 0 {
			return state.Deployment{}, &state.Error{Code: state.CodeMissingFiles,
				Message: "upload the missing files with POST /v1/files, then create the deployment again", Missing: missing}
		}
	}
	now := w.Clock.Now().Truncate(time.Millisecond)
	var d state.Deployment
	for {
		id := w.newID("dpl_")
		d = state.Deployment{
			ID: id, ProjectID: p.ID, URL: fixture.DeploymentURL(p.Name, id), Target: in.Target,
			CreatedAt: now, Env: in.Env, Files: in.Files,
			Logs: make([]state.LogLine, 0, 4), // room for the lifecycle's lines without regrowing
		}
		setDeploymentStatus(&d, nil, state.StatusQueued, nil, now)
		err := w.Store.CreateDeployment(d)
		if err == nil {
			break
		}
		if !errors.Is(err, state.ErrIDTaken) { // an imported state may hold the id drawn
			return state.Deployment{}, err
		}
	}
	id := d.ID
	w.scheduleDeployment(id, state.StatusQueued, sc.DeploymentSteps(p.ID, in.Target, MergeEnv(p.Env, in.Env)), now)
	w.changed()
	w.Sched.FireDue() // zero-time steps happen at once
	return d, nil
}

func (w *World) missingFiles(files map[string]string) []string {
	var missing []string
	for _, h := range files {
		if !w.Store.HasFile(h) {
			missing = append(missing, h)
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing)
}

// UploadFile records an uploaded file by its SHA-256 hex digest.
func (w *World) UploadFile(digest string) {
	w.Store.AddFile(digest)
	w.changed()
}

// Promote makes a ready deployment its project's production deployment.
func (w *World) Promote(id string) (projectID, previous string, err error) {
	projectID, previous, err = w.Store.Promote(id)
	if err == nil {
		w.changed()
	}
	return
}

// NewDomain is a validated add-domain request.
type NewDomain struct {
	ProjectID  string
	Hostname   string // normalized
	RedirectTo string // normalized, or empty
}

// AddDomain attaches a pending domain and schedules its lifecycle.
func (w *World) AddDomain(in NewDomain) (state.Domain, error) {
	sc := w.Scenario()
	now := w.Clock.Now().Truncate(time.Millisecond)
	d := state.Domain{
		Hostname: in.Hostname, ProjectID: in.ProjectID, Status: state.StatusPending,
		RedirectTo: in.RedirectTo, CreatedAt: now, TLS: state.TLS{Status: state.TLSPending},
	}
	if err := w.Store.AddDomain(d); err != nil {
		return state.Domain{}, err
	}
	w.end(certKey(in.Hostname))
	w.scheduleDomain(in.Hostname, state.StatusPending, sc.DomainSteps(in.Hostname), sc.Certificates, now)
	w.changed()
	w.Sched.FireDue()
	return d, nil
}

// DeleteDomain frees the hostname at once, revokes its certificate, and detaches it at
// the edge detachDelay later.
func (w *World) DeleteDomain(projectID, host string) (state.Domain, error) {
	now := w.Clock.Now()
	d, err := w.Store.DeleteDomain(projectID, host, now, now.Add(detachDelay))
	if err != nil {
		return state.Domain{}, err
	}
	w.end(domainKey(host))
	w.end(certKey(host))
	w.scheduleDetach(host, now.Add(detachDelay))
	w.changed()
	return d, nil
}

// ForceDeploymentStatus sets a deployment's status now; its scheduled steps are dropped.
func (w *World) ForceDeploymentStatus(id, status string) (state.Deployment, error) {
	if !state.ValidDeploymentStatus(status) {
		return state.Deployment{}, state.Errorf(state.CodeInvalidRequest, "status %q: want queued, building, ready or error", status)
	}
	w.Sched.FireDue()
	var d state.Deployment
	var err error
	w.Sched.Exclusive(func() { // no scheduled step can land between the two
		w.end(deploymentKey(id)) // harmless for an id that does not exist
		now := w.Clock.Now()
		d, err = w.Store.UpdateDeployment(id, func(d *state.Deployment, p *state.Project) {
			setDeploymentStatus(d, p, status, &scenario.StepError{Code: CodeBuildFailed, Message: "status forced to error by the control API"}, now)
		})
	})
	if err == nil {
		w.changed()
	}
	return d, err
}

// ForceDomainStatus sets a domain's status now (an active domain gets its certificate);
// its scheduled steps are dropped.
func (w *World) ForceDomainStatus(host, status string) (state.Domain, error) {
	if !state.ValidDomainStatus(status) {
		return state.Domain{}, state.Errorf(state.CodeInvalidRequest, "status %q: want pending, verifying, active or error", status)
	}
	w.Sched.FireDue()
	certs := w.Scenario().Certificates
	var d state.Domain
	var err error
	w.Sched.Exclusive(func() { // no scheduled step can land between the two
		w.end(domainKey(host)) // harmless for a hostname that does not exist
		w.end(certKey(host))
		now := w.Clock.Now()
		d, err = w.Store.UpdateDomain(host, func(d *state.Domain) {
			setDomainStatus(d, status, &scenario.StepError{Code: CodeVerificationFailed, Message: "status forced to error by the control API"}, certs, now)
		})
	})
	if err != nil {
		return d, err
	}
	if d.TLS.Status == state.TLSIssued {
		w.scheduleRenewal(host, *d.TLS.ExpiresAt, certs)
	}
	w.changed()
	return d, nil
}

// Advance moves a manual clock forward by d, firing every due transition in order.
func (w *World) Advance(d time.Duration) (time.Time, error) {
	return w.Sched.Advance(d)
}
