package emulator_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func TestProjectsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/projects", "t-read")
	mustStatus(t, r, 200)
	m := decode[emulator.ProjectList](t, r)
	if len(m.Projects) != 2 || m.NextCursor != nil {
		t.Fatalf("projects = %d, next_cursor = %v; want 2 and null", len(m.Projects), orNull(m.NextCursor))
	}
	blog, shop := m.Projects[0], m.Projects[1]
	if blog.ID != "prj_blog" || shop.ID != "prj_shop" {
		t.Fatalf("order: %v, %v; want newest first", blog.ID, shop.ID)
	}
	if shop.Name != "shop" {
		t.Errorf("shop.name = %q, want shop", shop.Name)
	}
	if at := time.Time(shop.CreatedAt); !at.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("shop.created_at = %v, want 2026-10-01T00:00:00.000Z", at)
	}
	if got := orNull(shop.ProductionDeploymentID); got != "dpl_first" {
		t.Errorf("shop.production_deployment_id = %v, want dpl_first", got)
	}
	if blog.ProductionDeploymentID != nil {
		t.Errorf("blog.production_deployment_id = %v, want null", *blog.ProductionDeploymentID)
	}
	if shop.Env["NODE_ENV"] != "production" {
		t.Errorf("shop.env = %v", shop.Env)
	}

	p1 := decode[emulator.ProjectList](t, e.get("/v1/projects?limit=1", "t-read"))
	if p1.NextCursor == nil || *p1.NextCursor == "" {
		t.Fatal("limit=1 gave no next_cursor")
	}
	p2 := decode[emulator.ProjectList](t, e.get("/v1/projects?limit=1&cursor="+*p1.NextCursor, "t-read"))
	if len(p2.Projects) == 0 || p2.Projects[0].ID != "prj_shop" || p2.NextCursor != nil {
		t.Fatalf("second page: %+v next %v", p2.Projects, orNull(p2.NextCursor))
	}
}

var idForm = regexp.MustCompile(`^dpl_[a-z0-9]+$`)

func TestCreateDeployment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{
		"project_id": "prj_shop", "files": map[string]string{"index.html": sha}, "env": map[string]string{"FEATURE_X": "off", "EXTRA": "1"},
		"unknown_field": true,
	})
	mustStatus(t, r, 201)
	d := decode[emulator.DeploymentCreated](t, r) // decode holds created_at to RFC 3339 UTC
	if !idForm.MatchString(d.ID) {
		t.Errorf("id %q is not dpl_<letters and digits>", d.ID)
	}
	if !strings.HasPrefix(d.URL, "https://") || strings.Contains(d.URL, "127.0.0.1") {
		t.Errorf("url %q: want a stable https URL independent of the request", d.URL)
	}
	if d.Status != "queued" || d.Target != "preview" || d.ProjectID != "prj_shop" {
		t.Errorf("create answer %+v", d)
	}
	if c := time.Time(d.CreatedAt); !c.Equal(testStart) {
		t.Errorf("created_at %v, want the clock (%s)", c, testStart.Format(stampFormat))
	}

	full := decode[emulator.Deployment](t, e.get("/v1/deployments/"+d.ID, "t-read"))
	if env := full.Env; env["API_URL"] != "https://api.shop.test" || env["FEATURE_X"] != "off" || env["EXTRA"] != "1" {
		t.Errorf("env = %v, want the project's env with the overrides merged on top", env)
	}
	if full.Files["index.html"] != sha {
		t.Errorf("files = %v", full.Files)
	}
	if full.URL != d.URL || full.Production || full.Error != nil {
		t.Errorf("full object %+v", full)
	}
	tm := full.Timings
	if tm.QueuedAt == nil || !tm.QueuedAt.Equal(time.Time(d.CreatedAt)) || tm.BuildingAt != nil || tm.ReadyAt != nil || tm.ErrorAt != nil {
		t.Errorf("timings = %+v", tm)
	}
	if want := e.url + "/v1/deployments/" + d.ID + "/logs"; full.BuildLogsURL != want {
		t.Errorf("build_logs_url = %v, want %s", full.BuildLogsURL, want)
	}
}

func TestDeploymentLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "target": "production"})).ID
	steps := []struct {
		by, status, timing string
	}{
		{"999ms", "queued", "queued_at"},
		{"1ms", "building", "building_at"},
		{"4999ms", "building", "building_at"},
		{"1ms", "ready", "ready_at"},
	}
	for _, s := range steps {
		e.advance(s.by)
		d := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read"))
		if d.Status != s.status {
			t.Fatalf("after +%s: status %v, want %s", s.by, d.Status, s.status)
		}
		at := map[string]*time.Time{"queued_at": d.Timings.QueuedAt, "building_at": d.Timings.BuildingAt, "ready_at": d.Timings.ReadyAt}
		if at[s.timing] == nil {
			t.Fatalf("after +%s: timings.%s is null", s.by, s.timing)
		}
	}
	d := decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read"))
	if ready := d.Timings.ReadyAt; ready == nil || !ready.Equal(testStart.Add(6*time.Second)) {
		t.Errorf("ready_at = %v, want start+6s", ready)
	}
	if !d.Production {
		t.Error("a production-target deployment that turned ready is not the production deployment")
	}
	p := decode[emulator.ProjectList](t, e.get("/v1/projects", "t-read")).Projects[1]
	if got := orNull(p.ProductionDeploymentID); got != id {
		t.Errorf("project production_deployment_id = %v, want %s", got, id)
	}
	logs := e.get(strings.TrimPrefix(d.BuildLogsURL, e.url), "t-read")
	mustStatus(t, logs, 200)
	page := decode[emulator.LogPage](t, logs)
	if len(page.Logs) < 3 {
		t.Fatalf("build logs have %d lines, want one per step at least", len(page.Logs))
	}
	if l := page.Logs[0]; l.CreatedAt.IsZero() || l.Text == "" {
		t.Errorf("log line %+v", l)
	}
	if page.NextCursor != nil {
		t.Error("short log has a next_cursor")
	}
}

func TestFixtureDeployments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_first", "t-read"))
	if !first.Production || first.Status != "ready" || first.Env["FEATURE_X"] != "on" {
		t.Errorf("dpl_first = %+v", first)
	}
	broken := decode[emulator.Deployment](t, e.get("/v1/deployments/dpl_broken", "t-read"))
	if broken.Status != "error" || broken.Error == nil || broken.Error.Code == "" || broken.Error.Message == "" {
		t.Errorf("dpl_broken: status %v error %+v", broken.Status, broken.Error)
	}
	if broken.Timings.ErrorAt == nil {
		t.Errorf("dpl_broken timings %+v", broken.Timings)
	}
}

func TestCreateDeploymentErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := `{"project_id":"prj_shop","files":{},"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	tests := []struct {
		name   string
		body   any
		ctype  string
		status int
		code   string
		msg    string
	}{
		{"empty body", "", "", 400, "invalid_request", "project_id"},
		{"missing project_id", `{"files":{}}`, "", 400, "invalid_request", "project_id"},
		{"missing files", `{"project_id":"prj_shop"}`, "", 400, "invalid_request", "files"},
		{"null files", `{"project_id":"prj_shop","files":null}`, "", 400, "invalid_request", "files"},
		{"project_id number", `{"project_id":1,"files":{}}`, "", 400, "invalid_request", "project_id"},
		{"files array", `{"project_id":"prj_shop","files":[]}`, "", 400, "invalid_request", "files"},
		{"file hash number", `{"project_id":"prj_shop","files":{"a":1}}`, "", 400, "invalid_request", "files"},
		{"file hash not hex", `{"project_id":"prj_shop","files":{"a":"xyz"}}`, "", 400, "invalid_request", "files"},
		{"file hash upper case", `{"project_id":"prj_shop","files":{"a":"` + strings.ToUpper(sha) + `"}}`, "", 400, "invalid_request", "files"},
		{"target number", `{"project_id":"prj_shop","files":{},"target":1}`, "", 400, "invalid_request", "target"},
		{"target unknown", `{"project_id":"prj_shop","files":{},"target":"staging"}`, "", 400, "invalid_request", "target"},
		{"env value number", `{"project_id":"prj_shop","files":{},"env":{"A":1}}`, "", 400, "invalid_request", "env"},
		{"env array", `{"project_id":"prj_shop","files":{},"env":[]}`, "", 400, "invalid_request", "env"},
		{"array body", `[]`, "", 400, "invalid_request", "object"},
		{"malformed", `{"project_id":`, "", 400, "invalid_json", "JSON"},
		{"syntax error", `{"project_id" "x"}`, "", 400, "invalid_json", "JSON"},
		{"trailing data", `{"project_id":"prj_shop","files":{}} {}`, "", 400, "invalid_json", "after"},
		{"unknown project", `{"project_id":"prj_nope","files":{}}`, "", 404, "project_not_found", "prj_nope"},
		{"text content type", `{"project_id":"prj_shop","files":{}}`, "text/plain", 415, "unsupported_media_type", "application/json"},
		{"no content type", `{"project_id":"prj_shop","files":{}}`, "-", 415, "unsupported_media_type", "application/json"},
		{"over 1 MiB", big, "", 413, "payload_too_large", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			switch tt.ctype {
			case "":
			case "-":
				h["Content-Type"] = ""
			default:
				h["Content-Type"] = tt.ctype
			}
			r := e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: tt.body, Headers: h})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
			m := r.Err(t)
			if !strings.Contains(m.Message, tt.msg) {
				t.Errorf("message %q does not name %q", m.Message, tt.msg)
			}
			if m.DocURL != e.url+"/docs/errors/"+tt.code {
				t.Errorf("doc_url = %v", m.DocURL)
			}
			if r.Header.Get("X-RateLimit-Limit") == "" {
				t.Error("an error answer lacks X-RateLimit-Limit")
			}
		})
	}
	// nothing half-written: the failed creates left no deployment behind
	if n := len(decode[emulator.DeploymentList](t, e.get("/v1/deployments?limit=100", "t-read")).Deployments); n != 3 {
		t.Errorf("%d deployments after failed creates, want the 3 of the fixtures", n)
	}
}

func TestGetDeploymentNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/deployments/dpl_nope", "t-read")
	if r.Status != 404 || r.Code() != "deployment_not_found" {
		t.Fatalf("%d %s", r.Status, r.Code())
	}
	r = e.get("/v1/deployments/dpl_nope/logs", "t-read")
	if r.Status != 404 || r.Code() != "deployment_not_found" {
		t.Fatalf("logs: %d %s", r.Status, r.Code())
	}
}

func TestListDeploymentsFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}, "target": "production"})
	ids := func(path string) string {
		r := e.get(path, "t-read")
		mustStatus(t, r, 200)
		var out []string
		for _, d := range decode[emulator.DeploymentList](t, r).Deployments {
			id := d.ID
			if !strings.HasPrefix(id, "dpl_first") && !strings.HasPrefix(id, "dpl_second") && !strings.HasPrefix(id, "dpl_broken") {
				id = "new"
			}
			out = append(out, id)
		}
		return strings.Join(out, ",")
	}
	tests := []struct{ query, want string }{
		{"", "new,dpl_broken,dpl_second,dpl_first"},
		{"?project_id=prj_shop", "dpl_broken,dpl_second,dpl_first"},
		{"?project_id=prj_blog", "new"},
		{"?target=production", "new,dpl_first"},
		{"?target=preview", "dpl_broken,dpl_second"},
		{"?status=ready", "dpl_second,dpl_first"},
		{"?status=error", "dpl_broken"},
		{"?status=queued", "new"},
		{"?project_id=prj_shop&status=ready&target=preview", "dpl_second"},
		{"?created_after=2026-11-01T10:00:00Z", "new,dpl_broken,dpl_second"},
		{"?created_before=2026-11-03T10:00:00Z", "dpl_second,dpl_first"},
		{"?created_after=2026-11-01T10:00:00Z&created_before=2026-11-03T10:00:00Z", "dpl_second"},
		{fmt.Sprintf("?created_after=%d", time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC).UnixMilli()), "new,dpl_broken"},
		{fmt.Sprintf("?created_before=%d", time.Date(2026, 11, 2, 10, 0, 0, 1e6, time.UTC).UnixMilli()), "dpl_second,dpl_first"},
		{"?limit=2", "new,dpl_broken"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := ids("/v1/deployments" + tt.query); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestListDeploymentsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	page := decode[emulator.DeploymentList](t, e.get("/v1/deployments?limit=1", "t-read"))
	if page.NextCursor == nil {
		t.Fatal("limit=1 gave no next_cursor")
	}
	cur := *page.NextCursor
	tests := []struct {
		query  string
		status int
		code   string
	}{
		{"?limit=0", 400, "invalid_request"},
		{"?limit=101", 400, "invalid_request"},
		{"?limit=abc", 400, "invalid_request"},
		{"?limit=-1", 400, "invalid_request"},
		{"?target=staging", 400, "invalid_request"},
		{"?status=done", 400, "invalid_request"},
		{"?created_after=yesterday", 400, "invalid_request"},
		{"?created_before=2026-13-01", 400, "invalid_request"},
		{"?cursor=garbage", 400, "invalid_cursor"},
		{"?cursor=" + cur[:len(cur)-2] + "AA", 400, "invalid_cursor"},
		{"?cursor=" + cur + "&status=ready", 400, "invalid_cursor"},
		{"?project_id=prj_nope", 404, "project_not_found"},
		{"?cursor=%zz", 400, "invalid_request"}, // URL.Query drops it: the first page again, a paging client's endless loop
		{"?limit=1&cursor=" + cur + "%", 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.get("/v1/deployments"+tt.query, "t-read")
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}
	if r := e.get("/v1/deployments?limit=100", "t-read"); r.Status != 200 {
		t.Errorf("limit=100: %d", r.Status)
	}
	// every list: a query string that does not parse is named, never read as no query
	for _, list := range []string{"/v1/projects", "/v1/deployments", "/v1/projects/prj_shop/domains", "/v1/deployments/dpl_first/logs"} {
		r := e.get(list+"?cursor=%zz", "t-read")
		if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, `invalid URL escape "%zz"`) {
			t.Errorf("%s?cursor=%%zz: %d %s", list, r.Status, r.Body)
		}
		// a pair naming no parameter of the list is ignored however it is written, as
		// any unknown parameter is (the public API is lenient)
		if r := e.get(list+"?utm=%zz&x=a;b", "t-read"); r.Status != 200 {
			t.Errorf("%s?utm=%%zz&x=a;b: %d %s", list, r.Status, r.Body)
		}
	}
	for _, q := range []string{"?status=%zz", "?created_after=%zz", "?limit=1;utm=x"} {
		if r := e.get("/v1/deployments"+q+"&utm=%zz", "t-read"); r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, "the query string: ") {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

func TestPromote(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	production := func(id string) bool {
		return decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Production
	}
	r := e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil)
	mustStatus(t, r, 200)
	m := decode[emulator.Promotion](t, r)
	if m.ProjectID != "prj_shop" || m.ProductionDeploymentID != "dpl_second" || orNull(m.PreviousDeploymentID) != "dpl_first" {
		t.Fatalf("promote answer %+v", m)
	}
	if !production("dpl_second") || production("dpl_first") {
		t.Error("production flags did not switch")
	}
	// roll back
	m = decode[emulator.Promotion](t, e.post("/v1/deployments/dpl_first/promote", "t-deploy", nil))
	if orNull(m.PreviousDeploymentID) != "dpl_second" {
		t.Errorf("roll back answer %+v", m)
	}
	queued := decode[emulator.DeploymentCreated](t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}})).ID
	tests := []struct {
		name, path, token string
		body              any
		status            int
		code              string
	}{
		{"not ready", "/v1/deployments/" + queued + "/promote", "t-deploy", nil, 409, "deployment_not_ready"},
		{"error status", "/v1/deployments/dpl_broken/promote", "t-deploy", nil, 409, "deployment_not_ready"},
		{"not found", "/v1/deployments/dpl_nope/promote", "t-deploy", nil, 404, "deployment_not_found"},
		{"read scope", "/v1/deployments/dpl_second/promote", "t-read", nil, 403, "insufficient_scope"},
		{"malformed body", "/v1/deployments/dpl_second/promote", "t-deploy", "{", 400, "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post(tt.path, tt.token, tt.body)
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Code(), tt.status, tt.code)
			}
		})
	}
	e.advance("6s")
	m = decode[emulator.Promotion](t, e.post("/v1/deployments/"+queued+"/promote", "t-admin", map[string]any{}))
	if m.PreviousDeploymentID != nil || m.ProductionDeploymentID != queued {
		t.Errorf("first promote of a project: %+v, want previous null", m)
	}
}
