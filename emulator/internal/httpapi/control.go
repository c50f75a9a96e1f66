package httpapi

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/view"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// controlAuth checks --control-token, when one is set.
func (a *API) controlAuth(r *http.Request) error {
	if a.cfg.ControlToken == "" {
		return nil
	}
	h, n := authorization(r.Header)
	tok, ok := bearer(h)
	switch {
	case n > 1: // as the hosting API refuses them (authorize): one may be a stray
		return apperr.Errorf(apperr.InvalidToken, "the request has %d Authorization headers; send one, with the control token", n)
	case h == "":
		return apperr.New(apperr.MissingToken, "the control API needs Authorization: Bearer <control token>")
	case !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(a.cfg.ControlToken)) != 1:
		return apperr.New(apperr.InvalidToken, "the control token is not valid")
	}
	return nil
}

type healthResponse struct {
	Status   string `json:"status"`
	Version  string `json:"version"`
	Scenario string `json:"scenario"`
	// ScenarioDeleted says the active scenario's file is gone (it stays active).
	ScenarioDeleted bool            `json:"scenario_deleted,omitempty"`
	Clock           string          `json:"clock"`
	Now             state.Timestamp `json:"now"`
}

func (a *API) health(c *gin.Context) (any, error) {
	w := a.world(c)
	clk := w.Clock()
	return healthResponse{Status: "ok", Version: a.cfg.Version, Scenario: w.Scenario().Name, ScenarioDeleted: w.ActiveDeleted(), Clock: clk.Mode, Now: clk.Now}, nil
}

func (a *API) reset(c *gin.Context) (any, error) {
	if err := a.world(c).Reset(); err != nil {
		return nil, err
	}
	return a.world(c).Clock(), nil
}

func (a *API) exportState(c *gin.Context) (any, error) { return a.streamState(c, a.world(c)) }

func (a *API) importState(c *gin.Context) (any, error) {
	w, err := a.importTurn(c)
	if err != nil {
		return nil, err
	}
	// the answer is encoded once the turn is given back: the next import's body is
	// waiting, and its read deadline with it
	return a.streamState(c, w)
}

// importTurn imports the request's state into its world, in its turn.
func (a *API) importTurn(c *gin.Context) (*world.World, error) {
	// one import at a time, every world together: each holds a whole decoded state until
	// the world takes it over, so concurrent ones wait their turn rather than share the
	// budget of bytes in flight and all run out of it
	release, err := a.takeTurn(c, a.imports, "another import")
	if err != nil {
		return nil, err
	}
	defer release()
	snap, err := decodeSnapshot(c, a.cfg.Limits.stateBytes())
	defer a.settle(c) // the world has the state now, or nobody does
	if err != nil {
		return nil, err
	}
	w := a.world(c)
	// a world is held to --max-world-bytes (a namespace's to the namespaces' budget)
	weight, err := w.CheckImport(&snap)
	if err != nil {
		return nil, err
	}
	if err := w.ImportWeighed(snap, weight); err != nil {
		return nil, err
	}
	return w, nil
}

// DefaultImportWait bounds how long a state import waits for the one under way.
const DefaultImportWait = 30 * time.Second

// takeTurn waits for a place in slots (a semaphore of the imports or exports under way)
// at most importWait: then 503 with Retry-After naming what holds them (what). release
// gives the place back.
func (a *API) takeTurn(c *gin.Context, slots chan struct{}, what string) (release func(), err error) {
	wait := time.NewTimer(a.importWait())
	defer wait.Stop()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-wait.C:
		c.Header("Retry-After", "1")
		return nil, apperr.Errorf(apperr.ServiceUnavailable, "%s has been under way for %s; retry", what, a.importWait())
	case <-c.Request.Context().Done():
		return nil, apperr.Errorf(apperr.ServiceUnavailable, "the client went away while waiting for %s to end", what)
	}
}

// importWait is Config.ImportWait, or its default.
func (a *API) importWait() time.Duration {
	if a.cfg.ImportWait > 0 {
		return a.cfg.ImportWait
	}
	return DefaultImportWait
}

// settle gives back what a request's body has charged to the budget of bytes in flight
// so far (its decoded state, for an import), before the request ends.
func (a *API) settle(c *gin.Context) {
	if m, ok := c.Request.Body.(*meteredBody); ok {
		a.bodies.release(m.held)
		m.held = 0
	}
}

func (a *API) getClock(c *gin.Context) (any, error) { return a.world(c).Clock(), nil }

func (a *API) setClock(c *gin.Context) (any, error) {
	var req world.ClockChange
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	return a.world(c).SetClock(req)
}

type advanceRequest struct {
	By *string `json:"by"`
}

func (a *API) advanceClock(c *gin.Context) (any, error) {
	var req advanceRequest
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	return a.world(c).AdvanceBy(req.By)
}

func (a *API) await(c *gin.Context) (any, error) {
	var req world.AwaitRequest
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	return a.world(c).Await(c.Request.Context(), req)
}

type faultView struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Hits   int64  `json:"hits"`
	fault.Spec
	// NearMisses, in a listing or GET /_emulator/faults/{id}, is what almost matched a
	// fault with no hits.
	NearMisses *[]fault.NearMiss `json:"near_misses,omitempty"`
}

func viewFault(f fault.Fault) faultView {
	return faultView{ID: f.ID, Source: f.Source, Hits: f.Hits, Spec: f.Spec}
}

func (a *API) addFault(c *gin.Context) (any, error) {
	var spec fault.Spec
	if err := decodeStrict(c, &spec, maxJSONBody); err != nil {
		return nil, err
	}
	f, err := a.world(c).AddFault(spec)
	if err != nil {
		return nil, err
	}
	return created{viewFault(f)}, nil
}

func (a *API) listFaults(c *gin.Context) (any, error) {
	return struct {
		Faults []faultView `json:"faults"`
	}{Faults: a.viewFaults(c, a.world(c).Faults())}, nil
}

// getFault answers GET /_emulator/faults/{id}: the fault as the listing shows it, its
// near misses weighed for it alone, not for every fault of the world.
func (a *API) getFault(c *gin.Context) (any, error) {
	f, err := a.world(c).FaultByID(c.Param("id"))
	if err != nil {
		return nil, err
	}
	return a.viewFaults(c, []fault.Fault{f})[0], nil
}

// viewFaults renders fs as the control API shows faults, the listing and a single
// fault alike: each with no hits carries its near misses, computed for fs only.
func (a *API) viewFaults(c *gin.Context, fs []fault.Fault) []faultView {
	out := make([]faultView, len(fs))
	near := a.world(c).FaultNearMisses(fs)
	for i, f := range fs {
		out[i] = viewFault(f)
		if nm, ok := near[f.ID]; ok {
			out[i].NearMisses = &nm
		}
	}
	return out
}

func (a *API) deleteFault(c *gin.Context) (any, error) {
	id := c.Param("id")
	if err := a.world(c).RemoveFault(id); err != nil {
		return nil, err
	}
	return map[string]any{"id": id, "deleted": true}, nil
}

func (a *API) clearFaults(c *gin.Context) (any, error) {
	a.world(c).ClearFaults()
	return map[string]any{"deleted": true}, nil
}

func (a *API) listRequests(c *gin.Context) (any, error) {
	f, err := requestsFilter(c)
	if err != nil {
		return nil, err
	}
	if err := a.world(c).CheckCode(f.Code); err != nil {
		return nil, apperr.New(apperr.InvalidRequest, "query parameter "+err.Error())
	}
	return streamed(func(w io.Writer) error { return a.world(c).WriteRequests(w, f) }), nil
}

func (a *API) clearRequests(c *gin.Context) (any, error) {
	a.world(c).ClearRequests()
	return map[string]any{"cleared": true}, nil
}

type mintRequest struct {
	Scope *string `json:"scope"`
}

func (a *API) mintToken(c *gin.Context) (any, error) {
	var req mintRequest
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	t, err := a.world(c).MintToken(req.Scope)
	if err != nil {
		return nil, err
	}
	return created{t}, nil
}

func (a *API) revokeToken(c *gin.Context) (any, error) {
	if err := a.world(c).RevokeToken(c.Param("token")); err != nil {
		return nil, err
	}
	return map[string]any{"revoked": true}, nil
}

func (a *API) forceDeploymentStatus(c *gin.Context) (any, error) {
	var req world.ForcedStatus
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if _, err := a.world(c).ForceDeploymentStatus(c.Param("id"), req); err != nil {
		return nil, err
	}
	return a.renderDeployment(c, c.Param("id"))
}

func (a *API) forceDomainStatus(c *gin.Context) (any, error) {
	var req world.ForcedStatus
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	d, err := a.world(c).ForceDomainStatus(c.Param("hostname"), req)
	if err != nil {
		return nil, err
	}
	return view.DomainOf(d), nil
}

type scenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
	Deleted     bool   `json:"deleted,omitempty"` // the active scenario, its file gone
	Problem     string `json:"problem,omitempty"` // a built-in that does not parse: why it cannot be chosen
}

type scenarioProblem struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
	Error  string `json:"error"`
}

type scenariosView struct {
	Active    string            `json:"active"`
	Scenarios []scenarioInfo    `json:"scenarios"`
	Errors    []scenarioProblem `json:"errors"`
}

func (a *API) listScenarios(c *gin.Context) (any, error) {
	l := a.world(c).ListScenarios()
	out := scenariosView{Active: l.Active, Scenarios: []scenarioInfo{}, Errors: []scenarioProblem{}}
	for _, s := range l.Scenarios {
		out.Scenarios = append(out.Scenarios, scenarioInfo{Name: s.Name, Description: s.Description, Source: s.Source, Deleted: s.Deleted, Problem: s.Problem})
	}
	for _, p := range l.Problems {
		out.Errors = append(out.Errors, scenarioProblem{File: p.File, Line: p.Line, Column: p.Column, Error: p.Message})
	}
	return out, nil
}

type useScenarioRequest struct {
	Name *string `json:"name"`
}

func (a *API) useScenario(c *gin.Context) (any, error) {
	var req useScenarioRequest
	if err := decodeStrict(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	if err := a.world(c).UseScenario(req.Name); err != nil {
		return nil, err
	}
	return map[string]string{"active": *req.Name}, nil
}

func (a *API) edgeRoutes(c *gin.Context) (any, error) {
	return map[string]any{"routes": a.world(c).EdgeRoutes()}, nil
}

// The read-only views and actions below exist for the dashboard, which reaches the
// world only through the control API (never with a hosting token), and for any tool.

type tokensView struct {
	Tokens        []state.Token `json:"tokens"`
	CipherAPIKeys []string      `json:"cipher_api_keys"`
}

func (a *API) listTokens(c *gin.Context) (any, error) {
	w := a.world(c)
	return tokensView{Tokens: w.Tokens(), CipherAPIKeys: w.CipherAPIKeys()}, nil
}

func (a *API) nextTransition(c *gin.Context) (any, error) { return a.world(c).AdvanceToNext() }

// Overview bounds: the dashboard shows the newest projects and deployments.
const (
	overviewProjects    = 100
	overviewDeployments = 25
)

type projectOverview struct {
	view.Project
	Deployments     []json.RawMessage `json:"deployments"` // each the full deployment object
	MoreDeployments bool              `json:"more_deployments"`
	Domains         []view.Domain     `json:"domains"`
}

func (a *API) overview(c *gin.Context) (any, error) {
	base := a.baseURL(c.Request)
	w := a.world(c)
	ps := w.Overview(overviewProjects, overviewDeployments)
	out := struct {
		Projects []projectOverview `json:"projects"`
		Now      state.Timestamp   `json:"now"`
		Replayed *world.ReplayInfo `json:"replayed,omitempty"`
	}{Projects: make([]projectOverview, len(ps)), Now: w.Clock().Now, Replayed: w.Replayed()}
	for i, p := range ps {
		po := projectOverview{Project: view.ProjectOf(p.Project), MoreDeployments: p.MoreDeployments,
			Deployments: make([]json.RawMessage, len(p.Deployments)), Domains: make([]view.Domain, len(p.Domains))}
		for j := range p.Deployments {
			d := &p.Deployments[j]
			po.Deployments[j] = appendDeployment(nil, base, d, p.Project.Env, d.ID == p.Project.ProductionDeploymentID)
		}
		for j, d := range p.Domains {
			po.Domains[j] = view.DomainOf(d)
		}
		out.Projects[i] = po
	}
	return out, nil
}

// requestsFilter reads GET /_emulator/requests' query: method, path, status, service,
// scope, code, since (a seq), limit, body (a JSON-path match), header and
// response_header (Name or Name:glob); a bad value is 400 naming it.
func requestsFilter(c *gin.Context) (journal.Filter, error) {
	q := c.Request.URL.Query()
	f := journal.Filter{Method: strings.ToUpper(q.Get("method")), Path: q.Get("path"),
		Service: q.Get("service"), Scope: q.Get("scope"), Code: q.Get("code")}
	number := func(key string, min int64) (int64, bool, error) {
		v := q.Get(key)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return 0, false, apperr.Errorf(apperr.InvalidRequest, "query parameter %q must be an integer from %d, not %q", key, min, v)
		}
		return n, true, nil
	}
	if n, ok, err := number("status", 0); err != nil {
		return f, err
	} else if ok {
		if err := journal.CheckStatus(n); err != nil { // before the int: named as sent
			return f, apperr.New(apperr.InvalidRequest, "query parameter "+err.Error())
		}
		s := int(n)
		f.Status = &s
	}
	if n, _, err := number("since", 0); err != nil {
		return f, err
	} else {
		f.Since = uint64(n)
	}
	if n, _, err := number("limit", 1); err != nil {
		return f, err
	} else {
		f.Limit = int(min(n, 1<<20))
	}
	given := func(key string) *string {
		if !q.Has(key) {
			return nil
		}
		v := q.Get(key)
		return &v
	}
	if field, err := f.ParseMatches(given("body"), given("header"), given("response_header")); err != nil {
		return f, apperr.New(apperr.InvalidRequest, "query parameter \""+field+"\": "+err.Error())
	}
	if err := f.Validate(); err != nil {
		return f, apperr.New(apperr.InvalidRequest, "query parameter "+err.Error())
	}
	return f, nil
}
