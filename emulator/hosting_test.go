package emulator_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestProjectsList(t *testing.T) {
	e := newEnv(t)
	r := e.get("/v1/projects", "t-read")
	mustStatus(t, r, 200)
	m := r.JSON(t)
	ps := m["projects"].([]any)
	if len(ps) != 2 || m["next_cursor"] != nil {
		t.Fatalf("projects = %d, next_cursor = %v; want 2 and null", len(ps), m["next_cursor"])
	}
	blog, shop := ps[0].(map[string]any), ps[1].(map[string]any)
	if blog["id"] != "prj_blog" || shop["id"] != "prj_shop" {
		t.Fatalf("order: %v, %v; want newest first", blog["id"], shop["id"])
	}
	for k, want := range map[string]any{"name": "shop", "created_at": "2026-10-01T00:00:00.000Z", "production_deployment_id": "dpl_first"} {
		if shop[k] != want {
			t.Errorf("shop.%s = %v, want %v", k, shop[k], want)
		}
	}
	if blog["production_deployment_id"] != nil {
		t.Errorf("blog.production_deployment_id = %v, want null", blog["production_deployment_id"])
	}
	if env := shop["env"].(map[string]any); env["NODE_ENV"] != "production" {
		t.Errorf("shop.env = %v", env)
	}

	p1 := e.get("/v1/projects?limit=1", "t-read").JSON(t)
	cur, _ := p1["next_cursor"].(string)
	if cur == "" {
		t.Fatal("limit=1 gave no next_cursor")
	}
	p2 := e.get("/v1/projects?limit=1&cursor="+cur, "t-read").JSON(t)
	if got := p2["projects"].([]any)[0].(map[string]any)["id"]; got != "prj_shop" || p2["next_cursor"] != nil {
		t.Fatalf("second page: %v next %v", got, p2["next_cursor"])
	}
}

var (
	idForm   = regexp.MustCompile(`^dpl_[a-z0-9]+$`)
	rfc3339Z = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
)

func TestCreateDeployment(t *testing.T) {
	e := newEnv(t)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{
		"project_id": "prj_shop", "files": map[string]string{"index.html": sha}, "env": map[string]string{"FEATURE_X": "off", "EXTRA": "1"},
		"unknown_field": true,
	})
	mustStatus(t, r, 201)
	d := r.JSON(t)
	id, _ := d["id"].(string)
	if !idForm.MatchString(id) {
		t.Errorf("id %q is not dpl_<letters and digits>", id)
	}
	if u, _ := d["url"].(string); !strings.HasPrefix(u, "https://") || strings.Contains(u, "127.0.0.1") {
		t.Errorf("url %q: want a stable https URL independent of the request", u)
	}
	if d["status"] != "queued" || d["target"] != "preview" || d["project_id"] != "prj_shop" {
		t.Errorf("create answer %v", d)
	}
	if c, _ := d["created_at"].(string); !rfc3339Z.MatchString(c) || c != testStart.Format(stampFormat) {
		t.Errorf("created_at %q, want RFC 3339 UTC of the clock (%s)", c, testStart.Format(stampFormat))
	}

	full := e.get("/v1/deployments/"+id, "t-read").JSON(t)
	env := full["env"].(map[string]any)
	if env["API_URL"] != "https://api.shop.test" || env["FEATURE_X"] != "off" || env["EXTRA"] != "1" {
		t.Errorf("env = %v, want the project's env with the overrides merged on top", env)
	}
	if full["files"].(map[string]any)["index.html"] != sha {
		t.Errorf("files = %v", full["files"])
	}
	if full["url"] != d["url"] || full["production"] != false || full["error"] != nil {
		t.Errorf("full object %v", full)
	}
	tm := full["timings"].(map[string]any)
	if tm["queued_at"] != d["created_at"] || tm["building_at"] != nil || tm["ready_at"] != nil || tm["error_at"] != nil {
		t.Errorf("timings = %v", tm)
	}
	if want := e.url + "/v1/deployments/" + id + "/logs"; full["build_logs_url"] != want {
		t.Errorf("build_logs_url = %v, want %s", full["build_logs_url"], want)
	}
}

func TestDeploymentLifecycle(t *testing.T) {
	e := newEnv(t)
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "target": "production"}).JSON(t)["id"].(string)
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
		d := e.get("/v1/deployments/"+id, "t-read").JSON(t)
		if d["status"] != s.status {
			t.Fatalf("after +%s: status %v, want %s", s.by, d["status"], s.status)
		}
		if d["timings"].(map[string]any)[s.timing] == nil {
			t.Fatalf("after +%s: timings.%s is null", s.by, s.timing)
		}
	}
	d := e.get("/v1/deployments/"+id, "t-read").JSON(t)
	if d["timings"].(map[string]any)["ready_at"] != testStart.Add(6*time.Second).Format(stampFormat) {
		t.Errorf("ready_at = %v, want start+6s", d["timings"])
	}
	if d["production"] != true {
		t.Error("a production-target deployment that turned ready is not the production deployment")
	}
	p := e.get("/v1/projects", "t-read").JSON(t)["projects"].([]any)[1].(map[string]any)
	if p["production_deployment_id"] != id {
		t.Errorf("project production_deployment_id = %v, want %s", p["production_deployment_id"], id)
	}
	logs := e.get(strings.TrimPrefix(d["build_logs_url"].(string), e.url), "t-read")
	mustStatus(t, logs, 200)
	lines := logs.JSON(t)["logs"].([]any)
	if len(lines) < 3 {
		t.Fatalf("build logs have %d lines, want one per step at least", len(lines))
	}
	if l := lines[0].(map[string]any); l["created_at"] == nil || l["text"] == nil {
		t.Errorf("log line %v", l)
	}
	if logs.JSON(t)["next_cursor"] != nil {
		t.Error("short log has a next_cursor")
	}
}

func TestFixtureDeployments(t *testing.T) {
	e := newEnv(t)
	first := e.get("/v1/deployments/dpl_first", "t-read").JSON(t)
	if first["production"] != true || first["status"] != "ready" || first["env"].(map[string]any)["FEATURE_X"] != "on" {
		t.Errorf("dpl_first = %v", first)
	}
	broken := e.get("/v1/deployments/dpl_broken", "t-read").JSON(t)
	errObj, _ := broken["error"].(map[string]any)
	if broken["status"] != "error" || errObj["code"] == nil || errObj["message"] == nil {
		t.Errorf("dpl_broken: status %v error %v", broken["status"], broken["error"])
	}
	if broken["timings"].(map[string]any)["error_at"] == nil {
		t.Errorf("dpl_broken timings %v", broken["timings"])
	}
}

func TestCreateDeploymentErrors(t *testing.T) {
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
			m := r.JSON(t)["error"].(map[string]any)
			if !strings.Contains(m["message"].(string), tt.msg) {
				t.Errorf("message %q does not name %q", m["message"], tt.msg)
			}
			if m["doc_url"] != e.url+"/docs/errors/"+tt.code {
				t.Errorf("doc_url = %v", m["doc_url"])
			}
			if r.Header.Get("X-RateLimit-Limit") == "" {
				t.Error("an error answer lacks X-RateLimit-Limit")
			}
		})
	}
	// nothing half-written: the failed creates left no deployment behind
	if n := len(e.get("/v1/deployments?limit=100", "t-read").JSON(t)["deployments"].([]any)); n != 3 {
		t.Errorf("%d deployments after failed creates, want the 3 of the fixtures", n)
	}
}

func TestGetDeploymentNotFound(t *testing.T) {
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
	e := newEnv(t)
	e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}, "target": "production"})
	ids := func(path string) string {
		r := e.get(path, "t-read")
		mustStatus(t, r, 200)
		var out []string
		for _, d := range r.JSON(t)["deployments"].([]any) {
			id := d.(map[string]any)["id"].(string)
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
	e := newEnv(t)
	page := e.get("/v1/deployments?limit=1", "t-read").JSON(t)
	cur := page["next_cursor"].(string)
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
}

func TestPromote(t *testing.T) {
	e := newEnv(t)
	r := e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil)
	mustStatus(t, r, 200)
	m := r.JSON(t)
	if m["project_id"] != "prj_shop" || m["production_deployment_id"] != "dpl_second" || m["previous_deployment_id"] != "dpl_first" {
		t.Fatalf("promote answer %v", m)
	}
	if e.get("/v1/deployments/dpl_second", "t-read").JSON(t)["production"] != true ||
		e.get("/v1/deployments/dpl_first", "t-read").JSON(t)["production"] != false {
		t.Error("production flags did not switch")
	}
	// roll back
	m = e.post("/v1/deployments/dpl_first/promote", "t-deploy", nil).JSON(t)
	if m["previous_deployment_id"] != "dpl_second" {
		t.Errorf("roll back answer %v", m)
	}
	queued := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}}).JSON(t)["id"].(string)
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
	m = e.post("/v1/deployments/"+queued+"/promote", "t-admin", map[string]any{}).JSON(t)
	if m["previous_deployment_id"] != nil || m["production_deployment_id"] != queued {
		t.Errorf("first promote of a project: %v, want previous null", m)
	}
}
