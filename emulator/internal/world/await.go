package world

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// pollEvery is how often a wait on a real clock looks at the condition again even
// when nothing changed: an await wakes at every change of the state, and this catches
// what the passing of time alone makes true (a detached host's grace running out).
const pollEvery = 50 * time.Millisecond

// defaultAwaitTimeout bounds an await that names no timeout: emulated time on a manual
// clock costs nothing, so there it is long enough for any scenario's lifecycle.
const (
	defaultAwaitReal   = 10 * time.Second
	defaultAwaitManual = time.Hour
)

// AwaitRequest is a POST /_emulator/await request: exactly one condition (a
// deployment's or domain's status, or a count of journaled requests) and a timeout.
type AwaitRequest struct {
	// Edge, with Deployment, waits until the edge serves that deployment at this host
	// (a promote, a domain turning active); with Code, until it answers that error code
	// there (unknown_host once a deleted domain detaches).
	Edge       *string        `json:"edge"`
	Code       *string        `json:"code"`
	Deployment *string        `json:"deployment"`
	Domain     *string        `json:"domain"`
	Status     *string        `json:"status"`
	Requests   *RequestsMatch `json:"requests"`
	Count      *int           `json:"count"`
	Timeout    *string        `json:"timeout"`
}

// RequestsMatch selects journaled requests as GET /_emulator/requests' filters do:
// method (any case), path (`*` wildcards), status, service, scope, error code, the
// entries after a seq, a body match ("target=production"), and a header of the request
// or of its answer ("Retry-After:30").
type RequestsMatch struct {
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Status         *int    `json:"status"`
	Service        string  `json:"service"`
	Scope          string  `json:"scope"`
	Code           string  `json:"code"`
	Since          uint64  `json:"since"`
	Body           *string `json:"body"`
	Header         *string `json:"header"`
	ResponseHeader *string `json:"response_header"`
}

// Filter is the journal filter m asks for; the error names what is wrong.
func (m *RequestsMatch) Filter() (journal.Filter, error) {
	f := journal.Filter{Method: strings.ToUpper(m.Method), Path: m.Path, Status: m.Status,
		Service: m.Service, Scope: m.Scope, Code: m.Code, Since: m.Since}
	if field, err := f.ParseMatches(m.Body, m.Header, m.ResponseHeader); err != nil {
		return f, apperr.New(apperr.InvalidRequest, "requests."+field+": "+err.Error())
	}
	if err := f.Validate(); err != nil {
		return f, apperr.New(apperr.InvalidRequest, "requests."+err.Error())
	}
	return f, nil
}

// AwaitResult is what held, and when.
type AwaitResult struct {
	Now    state.Timestamp `json:"now"`
	Status string          `json:"status,omitempty"`
	Count  int             `json:"count,omitempty"`
	// Deployment and Code are what the edge answered last (edge awaits).
	Deployment string `json:"deployment,omitempty"`
	Code       string `json:"code,omitempty"`
}

// MaxAwaitWall is the longest wall time an await may wait for (a requests condition on
// any clock, any condition on a real or scaled one), as a fault's delay is bounded.
const MaxAwaitWall = 24 * time.Hour

// defaultAwait is the timeout of an await that names none. A wait for journaled
// requests is in wall time whatever the clock (requests arrive from clients): 10 s. The
// others: an hour of emulated time on a clock that stands (the await moves it, so it
// costs nothing); 10 s on a real clock; on a scaled one, the same 10 s of wall time,
// rate times as much emulated time.
func defaultAwait(mode clock.Mode, journaled bool) time.Duration {
	switch {
	case journaled:
		return defaultAwaitReal
	case mode.Stands():
		return defaultAwaitManual
	case mode.Kind() == clock.Scaled:
		return time.Duration(float64(defaultAwaitReal) * mode.Rate())
	}
	return defaultAwaitReal
}

// Await waits until the request's condition holds, or answers await_timeout. On a
// manual clock it advances the clock from due transition to due transition; on a real
// clock it waits. Requests arrive from clients, so a wait for journal entries is always
// in real time.
func (w *World) Await(ctx context.Context, req AwaitRequest) (AwaitResult, error) {
	mode := w.clock.Mode()
	manual := mode.Stands()
	var timeout time.Duration
	if req.Timeout != nil {
		d, err := clock.ParseDuration(*req.Timeout)
		if err != nil {
			return AwaitResult{}, apperr.New(apperr.InvalidRequest, `field "timeout": `+err.Error())
		}
		timeout = d
	}
	var out AwaitResult
	cond, journaled, err := w.awaitCondition(req, &out)
	if err != nil {
		return AwaitResult{}, err
	}
	if req.Timeout == nil {
		timeout = defaultAwait(mode, journaled)
	}
	// A wait in wall time holds the request and a goroutine: bounded as a fault's delay
	// is. A manual clock's deployment or domain await costs no wall time.
	hold := timeout // a requests condition waits in wall time on every clock
	if !journaled {
		hold = w.clock.WallFor(timeout)
	}
	if (journaled || !manual) && hold > MaxAwaitWall {
		return AwaitResult{}, apperr.Errorf(apperr.InvalidRequest, `field "timeout": %s would hold the request for %s of wall time; at most 24h (on a manual or auto clock, a deployment's or domain's await takes no wall time)`, timeout, hold)
	}
	began := w.clock.Now()
	var ok bool
	switch {
	case journaled:
		ok = w.awaitJournal(ctx, timeout, cond)
	case manual:
		ok, err = w.awaitManualOrSwitched(ctx, timeout, cond)
	default:
		ok, err = w.awaitReal(ctx, w.clock.WallFor(timeout), cond)
	}
	if err != nil {
		return AwaitResult{}, err
	}
	if !ok {
		e := apperr.Errorf(apperr.AwaitTimeout, "the condition did not hold within %s: %s; the clock moved %s, from %s to %s",
			timeout, w.whereThingsStand(req, out), w.clock.Now().Sub(began), formatTime(began), formatTime(w.clock.Now()))
		if journaled {
			w.nearMissesOf(req, e)
		}
		return AwaitResult{}, e
	}
	out.Now = state.Timestamp(w.clock.Now())
	if manual && !journaled {
		w.emitClock()
	}
	return out, nil
}

// whereThingsStand says, for an await that timed out, what it saw last: the status and
// the transitions with their emulated times, the TLS status of a domain, the journal's
// count, or the edge's last answer.
func (w *World) whereThingsStand(req AwaitRequest, out AwaitResult) string {
	switch {
	case req.Edge != nil:
		if out.Deployment != "" {
			return "the edge last served deployment " + out.Deployment + " at " + *req.Edge
		}
		return "the edge last answered " + out.Code + " at " + *req.Edge
	case req.Deployment != nil:
		d, _, err := w.store.Deployment(*req.Deployment)
		if err != nil {
			return "deployment " + *req.Deployment + " is gone"
		}
		var steps []string
		for _, st := range []struct {
			name string
			at   *time.Time
		}{{"queued", d.Timings.QueuedAt}, {"building", d.Timings.BuildingAt}, {"ready", d.Timings.ReadyAt}, {"error", d.Timings.ErrorAt}} {
			if st.at != nil {
				steps = append(steps, st.name+" at "+formatTime(*st.at))
			}
		}
		return "deployment " + d.ID + " is " + d.Status + ", wanted " + *req.Status + " (" + strings.Join(steps, ", ") + ")"
	case req.Domain != nil:
		host, _ := domainHost(*req.Domain)
		d, err := w.store.Domain(host)
		if err != nil {
			return "domain " + *req.Domain + " is gone"
		}
		return "domain " + d.Hostname + " is " + d.Status + " (TLS " + d.TLS.Status + "), wanted " + *req.Status
	}
	return "the journal holds " + strconv.Itoa(out.Count) + " matching requests"
}

// awaitCondition checks the request and returns its condition, which records what it
// saw in out; journaled says it waits for requests rather than transitions.
func (w *World) awaitCondition(req AwaitRequest, out *AwaitResult) (cond func() bool, journaled bool, err error) {
	if req.Edge != nil {
		return w.awaitEdge(req, out)
	}
	kinds := 0
	for _, set := range []bool{req.Deployment != nil, req.Domain != nil, req.Requests != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, false, apperr.New(apperr.InvalidRequest, `give exactly one of "deployment", "domain", "requests" or "edge"`)
	}
	switch {
	case req.Deployment != nil:
		if req.Status == nil || !state.ValidDeploymentStatus(*req.Status) {
			return nil, false, statusProblem("deployment", req.Status, state.DeploymentStatuses...)
		}
		id, want := *req.Deployment, *req.Status
		if _, _, err := w.store.Deployment(id); err != nil {
			return nil, false, err
		}
		return func() bool {
			d, _, _ := w.store.Deployment(id)
			out.Status = d.Status
			return d.Status == want
		}, false, nil
	case req.Domain != nil:
		if req.Status == nil || !state.ValidDomainStatus(*req.Status) {
			return nil, false, statusProblem("domain", req.Status, state.DomainStatuses...)
		}
		host, err := domainHost(*req.Domain)
		if err != nil {
			return nil, false, err
		}
		want := *req.Status
		if _, err := w.store.Domain(host); err != nil {
			return nil, false, err
		}
		return func() bool {
			d, _ := w.store.Domain(host)
			out.Status = d.Status
			return d.Status == want
		}, false, nil
	}
	n := 1
	if req.Count != nil {
		n = *req.Count
	}
	if n < 1 {
		return nil, false, apperr.New(apperr.InvalidRequest, `field "count" must be at least 1`)
	}
	f, err := req.Requests.Filter()
	if err != nil {
		return nil, false, err
	}
	if err := w.CheckCode(f.Code); err != nil {
		return nil, false, apperr.New(apperr.InvalidRequest, "requests."+err.Error())
	}
	tally := w.journal.Tally(f, n) // each wake looks only at the entries recorded since the last
	return func() bool {
		out.Count = tally.Count()
		return out.Count >= n
	}, true, nil
}

// statusProblem refuses an awaited or forced status that is missing or not one of known
// (a resource's statuses): it names the value given and the closest known one, as every
// refused enum value does.
func statusProblem(resource string, got *string, known ...string) error {
	list := strings.Join(known[:len(known)-1], ", ") + " or " + known[len(known)-1]
	if got == nil {
		return apperr.Errorf(apperr.InvalidRequest, `field "status" is required: a %s status, one of %s`, resource, list)
	}
	return apperr.Errorf(apperr.InvalidRequest, `field "status": %q is not a %s status%s; it is one of %s`, *got, resource, yamlcheck.DidYouMean(*got, known), list)
}

// awaitManual steps a manual clock until cond holds or timeout has passed; manual is
// false (and nothing done) when the clock was switched to real before it got its turn.
func (w *World) awaitManual(timeout time.Duration, cond func() bool) (ok, manual bool, err error) {
	w.clockMu.Lock()
	defer w.clockMu.Unlock()
	if !w.clock.Mode().Stands() {
		return false, false, nil
	}
	w.fireDue()
	now := w.clock.Now()
	deadline := now.Add(min(timeout, clock.Limit.Sub(now)))
	for {
		if cond() {
			return true, true, nil
		}
		fired, err := w.sched.Step(deadline)
		if err != nil {
			return false, true, clockError(err)
		}
		if !fired {
			if _, err := w.sched.AdvanceTo(deadline); err != nil {
				return false, true, clockError(err)
			}
			return cond(), true, nil
		}
	}
}

// awaitManualOrSwitched is the await of a clock that stood when the request came: it
// steps the manual clock, or, when the clock was switched to a running one before the
// await got its turn at the clock lock, waits in wall time. Await refused nothing for
// the timeout's wall time (a standing clock costs none), so the wait after a switch is
// bounded here: the wall time the new clock takes to pass timeout, at most
// MaxAwaitWall, counted from the switch.
func (w *World) awaitManualOrSwitched(ctx context.Context, timeout time.Duration, cond func() bool) (bool, error) {
	ok, stillManual, err := w.awaitManual(timeout, cond)
	if stillManual {
		return ok, err
	}
	return w.awaitReal(ctx, min(w.clock.WallFor(timeout), MaxAwaitWall), cond)
}

// wallTimeout bounds a wait in wall time; a variable so that a test sees the bound
// without waiting for it.
var wallTimeout = context.WithTimeout

// awaitReal waits up to wall of wall time for cond, looking again at every change of
// the state and every pollEvery.
func (w *World) awaitReal(ctx context.Context, wall time.Duration, cond func() bool) (bool, error) {
	ctx, cancel := wallTimeout(ctx, wall)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		changed := w.store.NextChange()
		w.fireDue()
		if cond() {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-changed:
		case <-tick.C:
		}
	}
}

// awaitJournal waits in real time for journal entries: requests arrive from clients,
// so advancing a manual clock would not bring them sooner.
func (w *World) awaitJournal(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		v := w.journal.Version()
		if cond() {
			return true
		}
		if w.journal.Wait(ctx, v) == v {
			return cond()
		}
	}
}

// awaitEdge is the condition of an edge await: the host serves a deployment, or
// answers an error code.
func (w *World) awaitEdge(req AwaitRequest, out *AwaitResult) (cond func() bool, journaled bool, err error) {
	host := edge.NormalizeHost(*req.Edge)
	if host == "" {
		return nil, false, apperr.Errorf(apperr.InvalidRequest, `field "edge": %q is not a host`, *req.Edge)
	}
	if (req.Deployment == nil) == (req.Code == nil) {
		return nil, false, apperr.New(apperr.InvalidRequest, `with "edge", give exactly one of "deployment" (the host serves it) or "code" (the host answers that error)`)
	}
	return func() bool {
		d := edge.Decide(host, false, w.Edge(), w.EdgeDomain())
		out.Deployment, out.Code = d.Deployment.ID, d.Code
		if req.Deployment != nil {
			return d.Action == edge.ActionServe && d.Deployment.ID == *req.Deployment
		}
		return d.Action == edge.ActionError && d.Code == *req.Code
	}, false, nil
}

// formatTime writes t as the API does (RFC 3339, milliseconds, UTC).
func formatTime(t time.Time) string { return string(state.AppendTimestamp(nil, t)) }
