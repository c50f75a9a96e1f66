package state

import (
	"strconv"
	"time"
)

// The error codes of lifecycle error steps that name none.
const (
	CodeBuildFailed        = "build_failed"
	CodeVerificationFailed = "verification_failed"
)

// Certificates says how a domain's certificate is issued and renewed.
type Certificates struct {
	Issuer      string
	ValidFor    time.Duration
	RenewBefore time.Duration
	// RenewalFails makes every renewal fail (certificates.renewal.fail): the domain stays
	// active, tls.status turns error, and expires_at and issuer keep the certificate in
	// force, served until it expires. RenewalError is what the event reports.
	RenewalFails bool
	RenewalError *ErrorInfo
}

// Step is one status of a lifecycle, reached After the previous step.
type Step struct {
	Status string
	After  time.Duration
	Error  *ErrorInfo // for an error step; nil means the default code
}

// SetStatus moves a deployment to status at t: its timings (a status reached without
// the ones before it gets them at t too, as zero-time steps, and later ones are
// cleared: ready_at stays on an error after ready), its log lines, its error, and its
// project's production pointer p: a production-target deployment turning ready becomes
// production, one sent back to queued or building stops being it. Every deployment,
// live or from fixtures, goes through here, so all read alike.
func (d *Deployment) SetStatus(p *Project, status string, e *ErrorInfo, t time.Time) {
	d.Status = status
	var tt *time.Time // the status's own time, t
	if cap(d.Logs) == 0 {
		// the default lifecycle's four lines (queued, building's two, ready) in one
		// allocation: growing by each step's lines reallocated at every step after
		// the first (three allocations, 560 bytes, where this is one of 160)
		if status == StatusQueued {
			// a new deployment's: its queued_at in the same allocation (a create's)
			r := &queuedRoom{at: t}
			d.Logs, tt = r.logs[:0], &r.at
		} else {
			d.Logs = make([]LogLine, 0, 4)
		}
	}
	if tt == nil {
		tt = new(time.Time)
		*tt = t
	}
	at := func(old *time.Time) *time.Time {
		if old != nil {
			return old
		}
		tt := t
		return &tt
	}
	switch status {
	case StatusQueued:
		d.Timings = Timings{QueuedAt: tt}
		d.Error = nil
		d.Logs = append(d.Logs, LogLine{CreatedAt: t, Text: "Deployment queued"})
	case StatusBuilding:
		d.Timings = Timings{QueuedAt: at(d.Timings.QueuedAt), BuildingAt: tt}
		d.Error = nil
		d.Logs = append(d.Logs,
			LogLine{CreatedAt: t, Text: "Building " + d.ID + " (" + strconv.Itoa(len(d.Files)) + " files)"},
			LogLine{CreatedAt: t, Text: "Running build command"})
	case StatusReady:
		d.Timings = Timings{QueuedAt: at(d.Timings.QueuedAt), BuildingAt: at(d.Timings.BuildingAt), ReadyAt: tt}
		d.Error = nil
		d.Logs = append(d.Logs, LogLine{CreatedAt: t, Text: "Build completed; deployment ready at " + d.URL})
		if d.Target == TargetProduction && p != nil {
			p.ProductionDeploymentID = d.ID
		}
	case StatusError:
		d.Timings = Timings{QueuedAt: at(d.Timings.QueuedAt), BuildingAt: at(d.Timings.BuildingAt), ReadyAt: d.Timings.ReadyAt, ErrorAt: tt}
		info := &ErrorInfo{Code: CodeBuildFailed, Message: "the build failed"}
		if e != nil {
			info = &ErrorInfo{Code: e.Code, Message: e.Message}
		}
		d.Error = info
		d.Logs = append(d.Logs, LogLine{CreatedAt: t, Text: "Error: " + info.Message + " (" + info.Code + ")"})
	}
	if p != nil && p.ProductionDeploymentID == d.ID && InFlight(status) {
		p.ProductionDeploymentID = "" // a deployment being built again serves nothing
	}
}

// queuedRoom is a new deployment's room for the default lifecycle's four log lines and
// its queued_at, in one allocation: nothing writes through a timing's pointer, and the
// lines are appended in place as before (a copy of the deployment sees only its own
// length of them).
type queuedRoom struct {
	logs [4]LogLine
	at   time.Time
}

// EverReady reports whether the deployment was ready at some point (an error after
// ready keeps its ready_at): such a build is still served.
func (d *Deployment) EverReady() bool { return d.Timings.ReadyAt != nil }

// Replay takes a deployment created at d.CreatedAt through steps up to its status, as
// if the lifecycle had run: every status it passed has its time and its log lines. An
// error the steps never reach happens where the build would have ended. Fixture
// deployments are made this way, so they read like live ones.
func (d *Deployment) Replay(steps []Step) {
	target, e := d.Status, d.Error
	d.Timings, d.Error = Timings{}, nil
	at := d.CreatedAt
	for _, st := range steps {
		at = at.Add(st.After)
		if st.Status == target || (target == StatusError && !InFlight(st.Status)) {
			if e == nil {
				e = st.Error
			}
			d.SetStatus(nil, target, e, at)
			return
		}
		d.SetStatus(nil, st.Status, st.Error, at)
	}
	if d.Status != target {
		d.SetStatus(nil, target, e, at)
	}
}

// InFlight reports whether a deployment status is one a build is still in.
func InFlight(status string) bool { return status == StatusQueued || status == StatusBuilding }

// SetStatus moves a domain to status at t, with its certificate: pending until active,
// issued on turning active, error with the domain.
func (d *Domain) SetStatus(status string, e *ErrorInfo, certs Certificates, t time.Time) {
	d.Status = status
	switch status {
	case StatusPending, StatusVerifying:
		d.Error = nil
		d.TLS = TLS{Status: TLSPending}
	case StatusActive:
		d.Error = nil
		if d.TLS.Status != TLSIssued {
			d.Issue(certs, t)
		}
	case StatusError:
		info := &ErrorInfo{Code: CodeVerificationFailed, Message: "DNS records for " + d.Hostname + " could not be verified"}
		if e != nil {
			info = &ErrorInfo{Code: e.Code, Message: e.Message}
		}
		d.Error = info
		d.TLS = TLS{Status: TLSError}
	}
}

// Issue gives the domain a certificate issued at t, valid for certs.ValidFor.
func (d *Domain) Issue(certs Certificates, t time.Time) {
	exp := t.Add(certs.ValidFor)
	issuer := certs.Issuer
	d.TLS = TLS{Status: TLSIssued, ExpiresAt: &exp, Issuer: &issuer}
}

// FailRenewal records a failed renewal: tls.status error, the rest of the TLS data (the
// certificate still in force) kept. The documented tls.status (docs/api.md) is one of pending, issued
// and error, so a failed renewal is error rather than a new value clients cannot know;
// an active domain whose tls.status is error with an expires_at is exactly that state.
func (d *Domain) FailRenewal() {
	d.TLS.Status = TLSError
}

// Expiry is when a certificate first issued at issued expires at now, having been
// renewed (for ValidFor from each renewal) every time it came within RenewBefore of
// expiring: the expiry a fixture domain shows, consistent with the renewals a live one
// would have had.
func (c Certificates) Expiry(issued, now time.Time) time.Time {
	expires := issued.Add(c.ValidFor)
	period := c.ValidFor - c.RenewBefore
	if period <= 0 {
		return expires
	}
	late := now.Sub(expires.Add(-c.RenewBefore))
	switch {
	case late < 0:
		return expires
	case late > 100*365*24*time.Hour: // an absurd created_at; avoid overflowing
		return now.Add(period)
	}
	return expires.Add((late/period + 1) * period)
}
