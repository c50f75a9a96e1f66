package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/view"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Page sizes of every list.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// paged is a list route's handler h refusing a pair of the query string that names one
// of the parameters it reads (limit, cursor, and params) and does not parse: URL.Query
// drops a pair it cannot read, so ?cursor=%zz would answer the first page again, and a
// client paging with a cursor it escaped badly would loop on it for good. A pair naming
// no parameter of the route is ignored however it is written, as an unknown parameter
// is: the public API is lenient.
func paged(h handlerFunc, params ...string) handlerFunc {
	params = append([]string{"limit", "cursor"}, params...)
	return func(c *gin.Context) (any, error) {
		if err := unreadableQuery(c.Request.URL.RawQuery, params); err != nil {
			return nil, apperr.Errorf(apperr.InvalidRequest, "the query string: %v", err)
		}
		return h(c)
	}
}

// unreadableQuery is url.ParseQuery's error for the first pair of raw that it cannot
// read and whose key is one of params; nil when there is none.
func unreadableQuery(raw string, params []string) error {
	if raw == "" {
		return nil
	}
	if _, err := url.ParseQuery(raw); err == nil {
		return nil
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err != nil || !slices.Contains(params, k) {
			continue // not a parameter of the route's
		}
		if _, err := url.ParseQuery(pair); err != nil {
			return err
		}
	}
	return nil
}

func parseLimit(c *gin.Context) (int, error) {
	s, ok := c.GetQuery("limit")
	if !ok {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLimit {
		return 0, apperr.Errorf(apperr.InvalidRequest, "query parameter limit must be an integer from 1 to %d, not %q", maxLimit, s)
	}
	return n, nil
}

// parseTime reads created_after / created_before: RFC 3339 or Unix milliseconds (any
// integer). A valid time outside the years the world can hold is no error: it is moved
// to just outside them, where it bounds the same items (all or none).
func parseTime(name, s string) (time.Time, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err == nil:
		return clampToWorld(time.UnixMilli(ms)), nil
	case errors.Is(err, strconv.ErrRange): // all digits, beyond int64
		if strings.HasPrefix(s, "-") {
			return beforeWorld, nil
		}
		return afterWorld, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return clampToWorld(t), nil
	}
	return time.Time{}, apperr.Errorf(apperr.InvalidRequest, "query parameter %s must be an RFC 3339 time or Unix milliseconds, not %q", name, s)
}

// beforeWorld and afterWorld lie just outside the years a world's items may have
// (state.MinYear to state.MaxYear): every item is after the first and before the second.
var (
	beforeWorld = time.Date(state.MinYear, 1, 1, 0, 0, 0, -1, time.UTC)
	afterWorld  = time.Date(state.MaxYear, 1, 1, 0, 0, 0, 0, time.UTC)
)

func clampToWorld(t time.Time) time.Time {
	switch {
	case t.Before(beforeWorld):
		return beforeWorld
	case t.After(afterWorld):
		return afterWorld
	}
	return t.UTC()
}

func (a *API) listProjects(c *gin.Context) (any, error) {
	limit, err := parseLimit(c)
	if err != nil {
		return nil, err
	}
	after, err := a.decodeCursor("projects", c.Query("cursor"))
	if err != nil {
		return nil, err
	}
	ps, next := a.world(c).Projects(after, limit)
	out := view.ProjectList{Projects: make([]view.Project, len(ps)), NextCursor: a.encodeCursor("projects", next)}
	for i, p := range ps {
		out.Projects[i] = view.ProjectOf(p)
	}
	return out, nil
}

func (a *API) createDeployment(c *gin.Context) (any, error) {
	var req world.NewDeployment
	b, err := readJSONBody(c, maxJSONBody)
	if err != nil {
		return nil, err
	}
	// b is readBody's own buffer and nothing changes it: the deployment's strings are
	// cut from it, and the journal keeps it rather than a copy (as an upload's)
	if ex := exchangeOf(c); ex != nil && b != nil {
		ex.whole = b
	}
	if b != nil && !fastNewDeployment(b, &req) {
		// decoded into a variable of its own: one unmarshalStrict's reflection moves
		// to the heap on this path only, not req on every create's
		var full world.NewDeployment
		if err := unmarshalStrict(b, &full); err != nil {
			return nil, err
		}
		req = full
	}
	d, err := a.world(c).CreateDeployment(req)
	if err != nil {
		return nil, err
	}
	p := newPooledJSON() // view.Created, written by hand (TestAppendCreatedMatchesEncodingJSON)
	p.b, p.status = appendCreated(p.b, &d), http.StatusCreated
	return p, nil
}

func (a *API) listDeployments(c *gin.Context) (any, error) {
	limit, err := parseLimit(c)
	if err != nil {
		return nil, err
	}
	q := state.DeploymentQuery{ProjectID: c.Query("project_id"), Target: c.Query("target"), Status: c.Query("status"), Limit: limit}
	if q.Target != "" && q.Target != state.TargetPreview && q.Target != state.TargetProduction {
		return nil, apperr.Errorf(apperr.InvalidRequest, "query parameter target must be production or preview, not %q", q.Target)
	}
	if q.Status != "" && !state.ValidDeploymentStatus(q.Status) {
		return nil, apperr.Errorf(apperr.InvalidRequest, "query parameter status must be queued, building, ready or error, not %q", q.Status)
	}
	if s := c.Query("created_after"); s != "" {
		if q.Range.Oldest, err = parseTime("created_after", s); err != nil {
			return nil, err
		}
	}
	if s := c.Query("created_before"); s != "" {
		if q.Range.Newest, err = parseTime("created_before", s); err != nil {
			return nil, err
		}
	}
	scope := strings.Join([]string{"deployments", q.ProjectID, q.Target, q.Status,
		strconv.FormatInt(q.Range.Oldest.UnixNano(), 10), strconv.FormatInt(q.Range.Newest.UnixNano(), 10)}, "|")
	if q.Range.After, err = a.decodeCursor(scope, c.Query("cursor")); err != nil {
		return nil, err
	}
	ds, next, err := a.world(c).Deployments(q)
	if err != nil {
		return nil, err
	}
	base := a.baseURL(c.Request)
	out := newPooledJSON()
	b := append(out.b, `{"deployments":[`...)
	var project state.Project // a page is usually one project's: look it up once
	for i := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		if project.ID != ds[i].ProjectID {
			project, _ = a.world(c).Project(ds[i].ProjectID)
		}
		b = appendDeployment(b, base, &ds[i], project.Env, project.ProductionDeploymentID == ds[i].ID)
	}
	b = append(b, `],"next_cursor":`...)
	if cur := a.encodeCursor(scope, next); cur != nil {
		b = state.AppendJSONString(b, *cur)
	} else {
		b = append(b, "null"...)
	}
	out.b = append(b, '}')
	return out, nil
}

func (a *API) getDeployment(c *gin.Context) (any, error) {
	return a.renderDeployment(c, c.Param("id"))
}

// renderDeployment answers the full deployment object, as GET and the control API's
// forced status do.
func (a *API) renderDeployment(c *gin.Context, id string) (any, error) {
	w, start := a.worldAt(c)
	version := w.VersionAt(start)
	prefix, host := a.baseParts(c.Request)
	if e, ok := a.rendered.get(w, version, id, prefix, host); ok {
		return e, nil
	}
	base := prefix + host
	d, env, production, err := w.Deployment(id)
	if err != nil {
		return nil, err
	}
	p := newPooledJSON()
	p.b = appendDeployment(p.b, base, &d, env, production)
	a.rendered.put(w, version, id, base, p.b)
	return p, nil
}

func (a *API) getBuildLogs(c *gin.Context) (any, error) {
	id := c.Param("id")
	d, _, _, err := a.world(c).Deployment(id)
	if err != nil {
		return nil, err
	}
	limit := maxLimit
	if _, ok := c.GetQuery("limit"); ok {
		if limit, err = parseLimit(c); err != nil {
			return nil, err
		}
	}
	scope := "logs|" + id
	start := 0
	if k, err := a.decodeCursor(scope, c.Query("cursor")); err != nil {
		return nil, err
	} else if k != nil {
		start = int(k.At)
	}
	if start < 0 || start > len(d.Logs) {
		return nil, apperr.New(apperr.InvalidCursor, "the cursor is not one this list returned")
	}
	end := min(start+limit, len(d.Logs))
	out := view.LogPage{Logs: append([]state.LogLine{}, d.Logs[start:end]...)}
	if end < len(d.Logs) {
		out.NextCursor = a.encodeCursor(scope, &state.Key{At: int64(end)})
	}
	return out, nil
}

func (a *API) promote(c *gin.Context) (any, error) {
	if err := decodeJSON(c, &struct{}{}, maxJSONBody); err != nil {
		return nil, err
	}
	projectID, previous, err := a.world(c).Promote(c.Param("id"))
	if err != nil {
		return nil, err
	}
	out := view.Promotion{ProjectID: projectID, ProductionDeploymentID: c.Param("id")}
	if previous != "" {
		out.PreviousDeploymentID = &previous
	}
	return out, nil
}

func (a *API) uploadFile(c *gin.Context) (any, error) {
	digest := headerOf(c.Request.Header, "X-File-Digest")
	if n := len(c.Request.Header["X-File-Digest"]); n > 1 { // which one is meant is a guess
		return nil, apperr.Errorf(apperr.DigestMismatch, "header X-File-Digest is sent %d times; send it once, the SHA-256 of the body as 64 lowercase hex characters", n)
	}
	if err := world.CheckDigest(digest); err != nil {
		return nil, err // before reading a body that cannot be kept
	}
	b, err := readBody(c, maxFileBody)
	if err != nil {
		return nil, err
	}
	if ex := exchangeOf(c); ex != nil {
		ex.whole = b // the file store keeps b as it is, or nobody: the journal may keep it
	}
	if err := a.world(c).UploadFile(digest, b); err != nil {
		return nil, err
	}
	p := newPooledJSON() // no allocation of its own, as a create's answer
	p.b, p.status = appendUpload(p.b, digest, len(b)), http.StatusCreated
	return p, nil
}

// appendUpload appends view.Upload{digest, size} as encoding/json writes it, without
// its reflection: the digest is 64 lowercase hex characters (CheckDigest), nothing to
// escape. TestUploadJSON holds the two to the same bytes.
func appendUpload(b []byte, digest string, size int) []byte {
	b = append(b, `{"digest":"`...)
	b = append(b, digest...)
	b = append(b, `","size":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, '}')
}

func (a *API) addDomain(c *gin.Context) (any, error) {
	projectID := c.Param("project_id")
	if _, err := a.world(c).Project(projectID); err != nil {
		return nil, err // a missing project wins over a bad body
	}
	var req world.NewDomain
	if err := decodeJSON(c, &req, maxJSONBody); err != nil {
		return nil, err
	}
	d, err := a.world(c).AddDomain(projectID, req)
	if err != nil {
		return nil, err
	}
	return created{view.DomainOf(d)}, nil
}

func (a *API) listDomains(c *gin.Context) (any, error) {
	projectID := c.Param("project_id")
	limit, err := parseLimit(c)
	if err != nil {
		return nil, err
	}
	scope := "domains|" + projectID
	after, err := a.decodeCursor(scope, c.Query("cursor"))
	if err != nil {
		return nil, err
	}
	ds, next, err := a.world(c).Domains(projectID, after, limit)
	if err != nil {
		return nil, err
	}
	out := view.DomainList{Domains: make([]view.Domain, len(ds)), NextCursor: a.encodeCursor(scope, next)}
	for i, d := range ds {
		out.Domains[i] = view.DomainOf(d)
	}
	return out, nil
}

func (a *API) deleteDomain(c *gin.Context) (any, error) {
	d, err := a.world(c).DeleteDomain(c.Param("project_id"), c.Param("hostname"))
	if err != nil {
		return nil, err
	}
	return view.DomainDeleted{Hostname: d.Hostname, Deleted: true}, nil
}
