package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// maxStateBody bounds PUT /_emulator/state (a world of 100,000 deployments fits).
const maxStateBody = 512 << 20

// controlAuth guards the control API with --control-token when one is set.
func (a *API) controlAuth() gin.HandlerFunc {
	return func(c *gin.Context) {
		if a.cfg.ControlToken == "" {
			c.Next()
			return
		}
		h := c.Request.Header.Get("Authorization")
		tok, ok := bearer(h)
		switch {
		case h == "":
			a.renderError(c, newError("missing_token", "the control API needs Authorization: Bearer <control token>"))
		case !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(a.cfg.ControlToken)) != 1:
			a.renderError(c, newError("invalid_token", "the control token is not valid"))
		default:
			c.Next()
		}
	}
}

type healthResponse struct {
	Status   string          `json:"status"`
	Version  string          `json:"version"`
	Scenario string          `json:"scenario"`
	Clock    string          `json:"clock"`
	Now      state.Timestamp `json:"now"`
}

func (a *API) health(c *gin.Context) (any, error) {
	return healthResponse{Status: "ok", Version: a.cfg.Version, Scenario: a.w.Scenario().Name,
		Clock: string(a.w.Clock.Mode()), Now: state.Timestamp(a.w.Clock.Now())}, nil
}

func (a *API) reset(c *gin.Context) (any, error) {
	if err := a.w.Reset(); err != nil {
		return nil, err
	}
	return a.clockView(), nil
}

func (a *API) exportState(c *gin.Context) (any, error) {
	a.w.Sched.FireDue()
	return a.w.Store.Export(), nil
}

func (a *API) importState(c *gin.Context) (any, error) {
	var snap state.Snapshot
	if err := decodeJSON(c, &snap, maxStateBody); err != nil {
		return nil, err
	}
	if err := a.w.Import(snap); err != nil {
		return nil, newError("invalid_request", "the state is not valid: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return a.w.Store.Export(), nil
}

type clockView struct {
	Now  state.Timestamp `json:"now"`
	Mode string          `json:"mode"`
}

func (a *API) clockView() clockView {
	return clockView{Now: state.Timestamp(a.w.Clock.Now()), Mode: string(a.w.Clock.Mode())}
}

func (a *API) getClock(c *gin.Context) (any, error) { return a.clockView(), nil }

type setClockRequest struct {
	Mode *string `json:"mode"`
	Now  *string `json:"now"`
}

func (a *API) setClock(c *gin.Context) (any, error) {
	var req setClockRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	// check both fields before changing anything
	mode := a.w.Clock.Mode()
	if req.Mode != nil {
		m, err := clock.ParseMode(*req.Mode)
		if err != nil {
			return nil, newError("invalid_request", "field \"mode\" must be \"real\" or \"manual\"")
		}
		mode = m
	}
	var now time.Time
	if req.Now != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.Now)
		if err != nil {
			return nil, newError("invalid_request", "field \"now\" must be an RFC 3339 time")
		}
		now = t.UTC()
		switch {
		case mode != clock.Manual:
			return nil, clockError(clock.ErrNotManual)
		case now.Before(a.w.Clock.Now()):
			return nil, clockError(clock.ErrBackwards)
		case now.After(clock.Limit):
			return nil, clockError(clock.ErrTooFar)
		}
	}
	if req.Mode != nil {
		a.w.Clock.SetMode(mode)
		a.w.Sched.Wake()
	}
	if req.Now != nil {
		if _, err := a.w.Sched.AdvanceTo(now); err != nil {
			return nil, clockError(err)
		}
	}
	return a.clockView(), nil
}

func clockError(err error) error {
	switch {
	case errors.Is(err, clock.ErrNotManual):
		return newError("invalid_request", "the clock is in real mode; set {\"mode\":\"manual\"} first")
	case errors.Is(err, clock.ErrBackwards):
		return newError("invalid_request", "the clock never moves backwards")
	case errors.Is(err, clock.ErrTooFar):
		return newError("invalid_request", "the clock cannot pass the year 2200")
	}
	return err
}

type advanceRequest struct {
	By *string `json:"by"`
}

func (a *API) advanceClock(c *gin.Context) (any, error) {
	var req advanceRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if req.By == nil {
		return nil, newError("invalid_request", "field \"by\" is required: a duration such as \"90s\" or \"1d\"")
	}
	d, err := clock.ParseDuration(*req.By)
	if err != nil {
		return nil, newError("invalid_request", "field \"by\": "+err.Error())
	}
	if _, err := a.w.Advance(d); err != nil {
		return nil, clockError(err)
	}
	return a.clockView(), nil
}

type awaitRequest struct {
	Deployment *string `json:"deployment"`
	Domain     *string `json:"domain"`
	Status     *string `json:"status"`
	Requests   *struct {
		Method string `json:"method"`
		Path   string `json:"path"`
	} `json:"requests"`
	Count   *int    `json:"count"`
	Timeout *string `json:"timeout"`
}

type awaitResponse struct {
	Now    state.Timestamp `json:"now"`
	Status string          `json:"status,omitempty"`
	Count  int             `json:"count,omitempty"`
}

func (a *API) await(c *gin.Context) (any, error) {
	var req awaitRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	timeout := 10 * time.Second
	if req.Timeout != nil {
		d, err := clock.ParseDuration(*req.Timeout)
		if err != nil {
			return nil, newError("invalid_request", "field \"timeout\": "+err.Error())
		}
		timeout = d
	}
	var out awaitResponse
	var cond func() (bool, error)
	kinds := 0
	for _, set := range []bool{req.Deployment != nil, req.Domain != nil, req.Requests != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, newError("invalid_request", "give exactly one of \"deployment\", \"domain\" or \"requests\"")
	}
	switch {
	case req.Deployment != nil:
		if req.Status == nil || !state.ValidDeploymentStatus(*req.Status) {
			return nil, newError("invalid_request", "field \"status\" must be a deployment status: queued, building, ready or error")
		}
		cond = func() (bool, error) {
			d, _, err := a.w.Store.Deployment(*req.Deployment)
			out.Status = d.Status
			return d.Status == *req.Status, err
		}
	case req.Domain != nil:
		if req.Status == nil || !state.ValidDomainStatus(*req.Status) {
			return nil, newError("invalid_request", "field \"status\" must be a domain status: pending, verifying, active or error")
		}
		host, _ := state.NormalizeHostname(*req.Domain, true)
		cond = func() (bool, error) {
			d, err := a.w.Store.Domain(host)
			out.Status = d.Status
			return d.Status == *req.Status, err
		}
	default:
		n := 1
		if req.Count != nil {
			n = *req.Count
		}
		if n < 1 {
			return nil, newError("invalid_request", "field \"count\" must be at least 1")
		}
		f := journal.Filter{Method: strings.ToUpper(req.Requests.Method), Path: req.Requests.Path}
		cond = func() (bool, error) {
			out.Count = a.w.Journal.Count(f)
			return out.Count >= n, nil
		}
		ok, err := a.awaitJournal(c, timeout, cond)
		return a.awaitResult(ok, err, &out, timeout)
	}
	ok, now, err := a.w.Await(c.Request.Context(), timeout, cond)
	out.Now = state.Timestamp(now)
	return a.awaitResult(ok, err, &out, timeout)
}

func (a *API) awaitResult(ok bool, err error, out *awaitResponse, timeout time.Duration) (any, error) {
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, newError("await_timeout", fmt.Sprintf("the condition did not hold within %s", timeout))
	}
	if time.Time(out.Now).IsZero() {
		out.Now = state.Timestamp(a.w.Clock.Now())
	}
	return *out, nil
}

// awaitJournal waits in real time for journal entries: requests arrive from clients,
// so advancing a manual clock would not bring them sooner.
func (a *API) awaitJournal(c *gin.Context, timeout time.Duration, cond func() (bool, error)) (bool, error) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
	defer cancel()
	for {
		v := a.w.Journal.Version()
		if ok, _ := cond(); ok {
			return true, nil
		}
		if a.w.Journal.Wait(ctx, v) == v {
			ok, _ := cond()
			return ok, nil
		}
	}
}

type faultView struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Hits   int64  `json:"hits"`
	fault.Spec
}

func viewFault(f fault.Fault) faultView {
	return faultView{ID: f.ID, Source: f.Source, Hits: f.Hits, Spec: f.Spec}
}

func (a *API) addFault(c *gin.Context) (any, error) {
	var spec fault.Spec
	if err := decodeJSON(c, &spec, maxJSONBody); err != nil {
		return nil, err
	}
	f, err := a.w.Faults.Add(spec)
	if err != nil {
		return nil, newError("invalid_request", "fault: "+err.Error())
	}
	return created{viewFault(f)}, nil
}

func (a *API) listFaults(c *gin.Context) (any, error) {
	fs := a.w.Faults.List()
	out := struct {
		Faults []faultView `json:"faults"`
	}{Faults: make([]faultView, len(fs))}
	for i, f := range fs {
		out.Faults[i] = viewFault(f)
	}
	return out, nil
}

func (a *API) deleteFault(c *gin.Context) (any, error) {
	id := c.Param("id")
	if !a.w.Faults.Remove(id) {
		return nil, newError("fault_not_found", fmt.Sprintf("no API-added fault has id %q", id))
	}
	return map[string]any{"id": id, "deleted": true}, nil
}

func (a *API) clearFaults(c *gin.Context) (any, error) {
	a.w.Faults.Clear()
	return map[string]any{"deleted": true}, nil
}

func (a *API) listRequests(c *gin.Context) (any, error) {
	f := journal.Filter{Method: strings.ToUpper(c.Query("method")), Path: c.Query("path")}
	rs := a.w.Journal.List(f)
	if rs == nil {
		rs = []journal.Entry{}
	}
	return map[string]any{"requests": viewJournal(rs)}, nil
}

func (a *API) clearRequests(c *gin.Context) (any, error) {
	a.w.Journal.Clear()
	return map[string]any{"cleared": true}, nil
}

type mintRequest struct {
	Scope *string `json:"scope"`
}

func (a *API) mintToken(c *gin.Context) (any, error) {
	var req mintRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if req.Scope == nil {
		return nil, newError("invalid_request", "field \"scope\" is required: read, deploy or admin")
	}
	scope, ok := state.ParseScope(*req.Scope)
	if !ok {
		return nil, newError("invalid_request", fmt.Sprintf("field \"scope\" must be read, deploy or admin, not %q", *req.Scope))
	}
	return created{a.w.MintToken(scope)}, nil
}

func (a *API) revokeToken(c *gin.Context) (any, error) {
	tok := c.Param("token")
	if !a.w.Store.RevokeToken(tok) {
		return nil, newError("token_not_found", "no such hosting token")
	}
	return map[string]any{"revoked": true}, nil
}

type statusRequest struct {
	Status *string `json:"status"`
}

func (a *API) forceDeploymentStatus(c *gin.Context) (any, error) {
	var req statusRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if req.Status == nil {
		return nil, newError("invalid_request", "field \"status\" is required")
	}
	if _, err := a.w.ForceDeploymentStatus(c.Param("id"), *req.Status); err != nil {
		return nil, err
	}
	return a.renderDeployment(c, c.Param("id"))
}

func (a *API) forceDomainStatus(c *gin.Context) (any, error) {
	var req statusRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if req.Status == nil {
		return nil, newError("invalid_request", "field \"status\" is required")
	}
	host, ok := state.NormalizeHostname(c.Param("hostname"), true)
	if !ok {
		return nil, newError("domain_not_found", fmt.Sprintf("domain %q not found", c.Param("hostname")))
	}
	d, err := a.w.ForceDomainStatus(host, *req.Status)
	if err != nil {
		return nil, err
	}
	return viewDomain(d), nil
}

type scenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
}

type scenarioProblem struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

func (a *API) listScenarios(c *gin.Context) (any, error) {
	reg := a.w.Scenarios()
	out := struct {
		Active    string            `json:"active"`
		Scenarios []scenarioInfo    `json:"scenarios"`
		Errors    []scenarioProblem `json:"errors"`
	}{Active: a.w.Scenario().Name, Scenarios: []scenarioInfo{}, Errors: []scenarioProblem{}}
	for _, s := range reg.List() {
		out.Scenarios = append(out.Scenarios, scenarioInfo{Name: s.Name, Description: s.Description, Source: s.Source})
	}
	for _, p := range reg.Problems() {
		out.Errors = append(out.Errors, scenarioProblem{File: p.File, Line: p.Line, Error: p.Message})
	}
	return out, nil
}

type useScenarioRequest struct {
	Name *string `json:"name"`
}

func (a *API) useScenario(c *gin.Context) (any, error) {
	var req useScenarioRequest
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if req.Name == nil {
		return nil, newError("invalid_request", "field \"name\" is required")
	}
	if err := a.w.UseScenario(*req.Name); err != nil {
		return nil, err
	}
	return map[string]string{"active": *req.Name}, nil
}
