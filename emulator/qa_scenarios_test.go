package emulator_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// qaScenarios is the directory of the worked examples in docs/scenarios.md: QA's asks of
// issue 25, each a scenario file.
const qaScenarios = "../docs/examples/scenarios"

// Every worked example passes `hostemu validate` (emulator.Validate is what it runs).
func TestQAScenariosValidate(t *testing.T) {
	t.Parallel()
	summary, problems := emulator.Validate([]string{qaScenarios})
	if len(problems) > 0 {
		t.Fatalf("hostemu validate %s: %v", qaScenarios, problems)
	}
	t.Log(summary)
}

func withQAScenario(name string) func(*emulator.Options) {
	return func(o *emulator.Options) { o.ScenariosDir = qaScenarios; o.Scenario = name }
}

func (e *env) newDeployment(t testing.TB) string {
	t.Helper()
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r, 201)
	return decode[emulator.DeploymentCreated](t, r).ID
}

func (e *env) deploymentStatus(t testing.TB, id string) string {
	t.Helper()
	return decode[emulator.Deployment](t, e.get("/v1/deployments/"+id, "t-read")).Status
}

// QA scenario 1: builds take 20 minutes of emulated time.
func TestQASlowBuilds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withQAScenario("qa-slow-builds"))
	id := e.newDeployment(t)
	e.advance("10s")
	if s := e.deploymentStatus(t, id); s != "building" {
		t.Fatalf("after 10s: %s, want building", s)
	}
	e.advance("19m59s")
	if s := e.deploymentStatus(t, id); s != "building" {
		t.Fatalf("a second before 20 min of building: %s", s)
	}
	e.advance("1s")
	if s := e.deploymentStatus(t, id); s != "ready" {
		t.Fatalf("after 20 min of building: %s, want ready", s)
	}
}

// QA scenario 5: 30% of builds fail, drawn from the seeded source: the same seed fails
// the same share of deployments, the same ones, run after run.
func TestQAFlakyBuilds(t *testing.T) {
	t.Parallel()
	run := func(seed int64) []string {
		e := newEnv(t, withQAScenario("qa-flaky-builds"), func(o *emulator.Options) { o.Seed = seed })
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = e.newDeployment(t)
		}
		e.advance("10s")
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = e.deploymentStatus(t, id)
		}
		return out
	}
	a := run(42)
	failed := 0
	for _, s := range a {
		switch s {
		case "error":
			failed++
		case "ready":
		default:
			t.Fatalf("a build still %s after 10s", s)
		}
	}
	if failed < 15 || failed > 45 {
		t.Errorf("%d of 100 builds failed, want about 30", failed)
	}
	b := run(42)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 42 twice: deployment %d was %s then %s", i, a[i], b[i])
		}
	}
}

// QA scenario 3: rate limits for the deploy token only.
func TestQADeployTokenLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withQAScenario("qa-deploy-token-limited"))
	for i := range 2 {
		if r := e.get("/v1/projects", "t-deploy"); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("deploy request %d: %d limit %q", i, r.Status, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	if r := e.get("/v1/projects", "t-deploy"); r.Status != 429 || r.Code() != "rate_limited" {
		t.Fatalf("third deploy request in a second: %d %s", r.Status, r.Code())
	}
	for i := range 10 {
		if r := e.get("/v1/projects", "t-read"); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "100" {
			t.Fatalf("read request %d: %d limit %q", i, r.Status, r.Header.Get("X-RateLimit-Limit"))
		}
	}
	e.advance("1s")
	mustStatus(t, e.get("/v1/projects", "t-deploy"), 200)
}

// QA scenario 6: a certificate renewal that fails leaves the domain active with
// tls.status error, keeping expires_at and issuer.
func TestQARenewalFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withQAScenario("qa-renewal-fails"))
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "renew.example.test"}), 201)
	get := func() emulator.Domain {
		t.Helper()
		for _, d := range decode[emulator.DomainList](t, e.get("/v1/projects/prj_blog/domains", "t-read")).Domains {
			if d.Hostname == "renew.example.test" {
				return d
			}
		}
		t.Fatal("domain missing")
		return emulator.Domain{}
	}
	e.advance("2s")
	issued := get()
	if issued.Status != "active" || issued.TLS.Status != "issued" || issued.TLS.ExpiresAt == nil {
		t.Fatalf("after 2s: %+v", issued)
	}
	e.advance("5d")
	d := get()
	if d.Status != "active" || d.TLS.Status != "error" {
		t.Fatalf("after the renewal point: domain %s tls %s, want active and error", d.Status, d.TLS.Status)
	}
	if d.TLS.ExpiresAt == nil || !d.TLS.ExpiresAt.Equal(*issued.TLS.ExpiresAt) || d.TLS.Issuer == nil || *d.TLS.Issuer != *issued.TLS.Issuer {
		t.Errorf("tls data not kept: %+v, was %+v", d.TLS, issued.TLS)
	}
}

// QA scenario 2: a domain whose DNS verifies late, after two failed verifications.
func TestQADNSVerifiesLate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withQAScenario("qa-dns-verifies-late"))
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]string{"hostname": "late.example.test"}), 201)
	status := func() string {
		t.Helper()
		for _, d := range decode[emulator.DomainList](t, e.get("/v1/projects/prj_blog/domains", "t-read")).Domains {
			if d.Hostname == "late.example.test" {
				return d.Status + "/" + d.TLS.Status
			}
		}
		return "missing"
	}
	for _, step := range []struct{ advance, want string }{
		{"29s", "pending/pending"},
		{"1s", "verifying/pending"},
		{"1m", "pending/pending"},
		{"1m", "verifying/pending"},
		{"1m", "pending/pending"},
		{"1m", "verifying/pending"},
		{"29s", "verifying/pending"},
		{"1s", "active/issued"},
	} {
		e.advance(step.advance)
		if got := status(); got != step.want {
			t.Fatalf("after another %s: %s, want %s", step.advance, got, step.want)
		}
	}
}

// QA scenario 4: a 503 storm on promote for 2 minutes of emulated time from the
// scenario's activation, then promotes work again.
func TestQAPromote503Storm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withQAScenario("qa-promote-503-storm"))
	if r := e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil); r.Status != 503 || r.Code() != "service_unavailable" {
		t.Fatalf("promote during the storm: %d %s", r.Status, r.Body)
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200) // only promotes
	e.advance("1m59s")
	if r := e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil); r.Status != 503 {
		t.Fatalf("promote at 1m59s: %d", r.Status)
	}
	e.advance("1s")
	mustStatus(t, e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil), 200)
	// a reset starts the storm again
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	if r := e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil); r.Status != 503 {
		t.Fatalf("promote after a reset: %d", r.Status)
	}
}

// A fault's after, from/until and for, added through the control API: after N skips
// the first N matches; from/until and for bound it on the emulator's clock.
func TestFaultWindows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	statuses := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(fmt.Sprint(e.get("/v1/projects", "t-read").Status / 100))
		}
		return b.String()
	}
	f := e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503, "after": 2, "times": 2})
	mustStatus(t, f, 201)
	if got := statuses(6); got != "225522" {
		t.Fatalf("after 2, times 2: %s", got)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503, "for": "2m"}), 201)
	if got := statuses(1); got != "5" {
		t.Fatalf("for 2m, at once: %s", got)
	}
	e.advance("2m")
	if got := statuses(1); got != "2" {
		t.Fatalf("for 2m, 2m later: %s", got)
	}
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/faults"}), 200)
	now := time.Time(decode[emulator.ClockView](t, e.get("/_emulator/clock", "")).Now)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects"}, "status": 503,
		"from": now.Add(time.Minute).Format(time.RFC3339), "until": now.Add(3 * time.Minute).Format(time.RFC3339)}), 201)
	var got strings.Builder
	for _, step := range []string{"", "1m", "1m59s", "1s"} {
		if step != "" {
			e.advance(step)
		}
		got.WriteString(statuses(1))
	}
	if got.String() != "2552" {
		t.Fatalf("from +1m until +3m, at 0, 1m, 2m59s, 3m: %s", got.String())
	}
	// the listing shows what was added, the window as written
	if r := e.get("/_emulator/faults", ""); !strings.Contains(string(r.Body), `"until":"`) {
		t.Fatalf("faults: %s", r.Body)
	}
	for body, want := range map[string]string{
		`{"status":503,"for":"soon"}`:                                                 "for",
		`{"status":503,"after":-1}`:                                                   "after",
		`{"status":503,"for":"1m","from":"2026-01-01T00:00:00Z"}`:                     "for excludes",
		`{"status":503,"from":"2026-01-02T00:00:00Z","until":"2026-01-01T00:00:00Z"}`: "until must be later",
	} {
		r := e.do(req{Method: "POST", Path: "/_emulator/faults", Body: json.RawMessage(body)})
		if r.Status != 400 || !strings.Contains(r.Err(t).Message, want) {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
}
