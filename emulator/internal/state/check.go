package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"

	"github.com/hostemu/hostemu/emulator/internal/envelope"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// The years a timestamp of the world may have: within them Unix nanoseconds, RFC 3339
// and every computation on the clock stay exact. MaxYear is the first year refused;
// LastYear, the last allowed, is the one messages name.
const (
	MinYear  = 1970
	MaxYear  = clock.MaxYear
	LastYear = MaxYear - 1
)

// InRange reports whether t lies in the years MinYear to LastYear.
func InRange(t time.Time) bool { return t.Year() >= MinYear && t.Year() < MaxYear }

// TLSStatusFor is the certificate status a domain status implies: issued once active,
// error with the domain, pending before.
func TLSStatusFor(domainStatus string) string {
	switch domainStatus {
	case StatusActive:
		return TLSIssued
	case StatusError:
		return TLSError
	}
	return TLSPending
}

// Check reports every inconsistency in snap: duplicate ids, tokens or hostnames, unknown
// scopes or statuses, references to projects or deployments that do not exist, and
// files and env variable names the API refuses (FilesProblem, EnvProblem).
func (snap *Snapshot) Check() error { return snap.check(nil) }

// check is Check. built, when not nil, waits for the deployments by id that a store's
// build makes of snap beside the check (Store.Load) and returns them: the check then
// makes no map of 100,000 deployments of its own, the same again. Where the build's map
// is shorter than snap's deployments, some id comes twice, and the check is made again
// as Check makes it, for its words and their order.
func (snap *Snapshot) check(built func() map[string]*Deployment) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	tokens := map[string]bool{}
	for _, t := range snap.Tokens {
		if t.Token == "" {
			bad("tokens: empty token")
		}
		if tokens[t.Token] {
			bad("tokens: duplicate token")
		}
		tokens[t.Token] = true
		if _, ok := ParseScope(string(t.Scope)); !ok {
			bad("tokens: unknown scope %q%s", t.Scope, yamlcheck.Suggest(string(t.Scope), Scopes))
		}
	}
	if s := snap.Policy.DomainWriteScope; s != "" && s != ScopeAdmin && s != ScopeDeploy {
		bad("policy.domain_write_scope: %q is not admin or deploy%s", s, yamlcheck.DidYouMean(string(s), []string{string(ScopeAdmin), string(ScopeDeploy)}))
	}
	keyIDs := map[string]bool{}
	for _, k := range snap.Cipher.MasterKeys {
		if k.ID == "" || keyIDs[k.ID] {
			bad("cipher.master_keys: empty or duplicate id %q", k.ID)
		}
		keyIDs[k.ID] = true
		if len(k.Key) != envelope.SecretSize {
			bad("cipher.master_keys: key %q is %d bytes, want %d", k.ID, len(k.Key), envelope.SecretSize)
		}
	}
	projects := map[string]bool{}
	for _, p := range snap.Projects {
		if !ValidID("prj_", p.ID) {
			bad("projects: id %q does not have the form prj_<suffix>", p.ID)
		}
		if projects[p.ID] {
			bad("projects: duplicate id %q", p.ID)
		}
		projects[p.ID] = true
		if problem := EnvProblem(p.Env); problem != "" {
			bad("project %q: %s", p.ID, problem)
		}
	}
	// id → its project and whether it was ever ready: one map made for them all (or the
	// build's, below)
	var deployments map[string]checkedDeployment
	if built == nil {
		deployments = make(map[string]checkedDeployment, len(snap.Deployments))
	}
	for i := range snap.Deployments {
		d := &snap.Deployments[i]
		if !InRange(d.CreatedAt) {
			bad("deployment %q: created_at is outside %d-%d", d.ID, MinYear, LastYear)
		}
		if !ValidID("dpl_", d.ID) {
			bad("deployments: id %q does not have the form dpl_<suffix>", d.ID)
		}
		if deployments != nil {
			if _, dup := deployments[d.ID]; dup {
				bad("deployments: duplicate id %q", d.ID)
			}
			deployments[d.ID] = checkedDeployment{d.ProjectID, d.EverReady()}
		}
		if !projects[d.ProjectID] {
			bad("deployment %q: project %q does not exist", d.ID, d.ProjectID)
		}
		if !ValidDeploymentStatus(d.Status) {
			bad("deployment %q: unknown status %q%s", d.ID, d.Status, yamlcheck.Suggest(d.Status, DeploymentStatuses))
		}
		if d.Target != TargetPreview && d.Target != TargetProduction {
			bad("deployment %q: unknown target %q%s", d.ID, d.Target, yamlcheck.Suggest(d.Target, Targets))
		}
		if problem := d.timingsProblem(); problem != "" {
			bad("deployment %q: %s", d.ID, problem)
		}
		if problem := snap.filesRead.problem(i, d.Files); problem != "" {
			bad("deployment %q: %s", d.ID, problem)
		}
		if problem := EnvProblem(d.Env); problem != "" {
			bad("deployment %q: %s", d.ID, problem)
		}
	}
	lookup := func(id string) checkedDeployment { return deployments[id] }
	if built != nil {
		byID := built()
		if len(byID) != len(snap.Deployments) {
			return snap.check(nil) // an id twice: said where Check says it
		}
		lookup = func(id string) checkedDeployment {
			if d := byID[id]; d != nil {
				return checkedDeployment{d.ProjectID, d.EverReady()}
			}
			return checkedDeployment{}
		}
	}
	for _, p := range snap.Projects {
		if id := p.ProductionDeploymentID; id != "" && lookup(id).project != p.ID {
			bad("project %q: production deployment %q is not one of its deployments", p.ID, id)
		} else if id != "" && !lookup(id).built {
			bad("project %q: production deployment %q was never ready", p.ID, id)
		}
	}
	hosts := map[string]bool{}
	for _, d := range snap.Domains {
		if h, ok := NormalizeHostname(d.Hostname, true); !ok || h != d.Hostname {
			bad("domain %q: the hostname is not a lower-case fully qualified domain name (as the API would store it)", d.Hostname)
		}
		if d.RedirectTo != "" {
			if h, ok := NormalizeHostname(d.RedirectTo, false); !ok || h != d.RedirectTo {
				bad("domain %q: redirect_to %q is not a lower-case fully qualified domain name", d.Hostname, d.RedirectTo)
			}
		}
		if (d.Error != nil) != (d.Status == StatusError) {
			bad("domain %q: error is set exactly when the status is error", d.Hostname)
		}
		if hosts[d.Hostname] {
			bad("domains: duplicate hostname %q", d.Hostname)
		}
		hosts[d.Hostname] = true
		if !projects[d.ProjectID] {
			bad("domain %q: project %q does not exist", d.Hostname, d.ProjectID)
		}
		if !ValidDomainStatus(d.Status) {
			bad("domain %q: unknown status %q%s", d.Hostname, d.Status, yamlcheck.Suggest(d.Status, DomainStatuses))
		}
		switch d.TLS.Status {
		case TLSPending, TLSIssued, TLSError:
		default:
			bad("domain %q: unknown tls status %q%s", d.Hostname, d.TLS.Status, yamlcheck.Suggest(d.TLS.Status, TLSStatuses))
		}
		renewalFailed := d.Status == StatusActive && d.TLS.Status == TLSError && d.TLS.ExpiresAt != nil && d.TLS.Issuer != nil
		if want := TLSStatusFor(d.Status); ValidDomainStatus(d.Status) && d.TLS.Status != want && !renewalFailed {
			bad("domain %q: tls.status %q does not fit a domain that is %s (want %s)", d.Hostname, d.TLS.Status, d.Status, want)
		}
		if issued := d.TLS.Status == TLSIssued || renewalFailed; issued != (d.TLS.ExpiresAt != nil) || issued != (d.TLS.Issuer != nil) {
			bad("domain %q: tls.expires_at and tls.issuer are set exactly when the certificate is issued", d.Hostname)
		}
		if d.TLS.ExpiresAt != nil && !InRange(*d.TLS.ExpiresAt) {
			bad("domain %q: tls.expires_at is outside %d-%d", d.Hostname, MinYear, LastYear)
		}
	}
	for _, d := range snap.Detaching {
		if !InRange(d.DeleteAt) || !InRange(d.DetachAt) {
			bad("detaching %q: deleted_at and detach_at must lie in %d-%d", d.Hostname, MinYear, LastYear)
		}
	}
	return errors.Join(errs...)
}

// checkedDeployment is what Check remembers of a deployment: its project, and whether
// it was ever ready.
type checkedDeployment struct {
	project string
	built   bool
}

// timingsProblem says what is inconsistent between a deployment's status, its timings
// and its error, or "": every status it reached has its time, none it did not reach
// does (ready_at stays on an error after ready), and error is set exactly on error.
func (d *Deployment) timingsProblem() string {
	t := d.Timings
	var want [4]bool // queued, building, ready, error
	switch d.Status {
	case StatusQueued:
		want = [4]bool{true, false, false, false}
	case StatusBuilding:
		want = [4]bool{true, true, false, false}
	case StatusReady:
		want = [4]bool{true, true, true, false}
	case StatusError:
		want = [4]bool{true, true, t.ReadyAt != nil, true}
	default:
		return "" // an unknown status is reported on its own
	}
	have := [4]bool{t.QueuedAt != nil, t.BuildingAt != nil, t.ReadyAt != nil, t.ErrorAt != nil}
	names := [4]string{"queued_at", "building_at", "ready_at", "error_at"}
	for i := range want {
		switch {
		case want[i] && !have[i]:
			return "status " + d.Status + " needs timings." + names[i]
		case !want[i] && have[i]:
			return "status " + d.Status + " cannot have timings." + names[i]
		}
	}
	if (d.Error != nil) != (d.Status == StatusError) {
		return "error is set exactly when the status is error"
	}
	return ""
}
