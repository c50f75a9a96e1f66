package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// pollingApp is an app that was not written for tests: it creates a deployment,
// sleeps and polls until it is ready, promotes it, adds a domain, and sleeps and polls
// until the domain is active with its certificate issued. It knows nothing of the
// control API. It reports the wall time it took and what it saw last.
type pollingApp struct {
	base  string
	token string
	every time.Duration // the sleep between polls
	limit time.Duration // the most wall time it waits for a step before it gives up
}

type appResult struct {
	wall       time.Duration
	polls      int
	deployment emulator.Deployment
	domain     emulator.Domain
}

func (a pollingApp) call(method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// pollUntil polls get every a.every until done holds, for at most a.limit of wall time.
func (a pollingApp) pollUntil(res *appResult, what string, get func() error, done func() bool) error {
	began := time.Now()
	for {
		res.polls++
		if err := get(); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if time.Since(began) > a.limit {
			return fmt.Errorf("%s: still not there after %s of polling", what, a.limit)
		}
		time.Sleep(a.every) // the app's own poll interval: what the clock modes are for
	}
}

func (a pollingApp) run(host string) (appResult, error) {
	var res appResult
	began := time.Now()
	var created emulator.DeploymentCreated
	if err := a.call("POST", "/v1/deployments", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "target": "preview"}, &created); err != nil {
		return res, err
	}
	err := a.pollUntil(&res, "deployment ready", func() error {
		return a.call("GET", "/v1/deployments/"+created.ID, nil, &res.deployment)
	}, func() bool { return res.deployment.Status == "ready" })
	if err != nil {
		return res, err
	}
	if err := a.call("POST", "/v1/deployments/"+created.ID+"/promote", nil, nil); err != nil {
		return res, err
	}
	if err := a.call("POST", "/v1/projects/prj_shop/domains", map[string]any{"hostname": host}, nil); err != nil {
		return res, err
	}
	err = a.pollUntil(&res, "domain active", func() error {
		var list emulator.DomainList
		if err := a.call("GET", "/v1/projects/prj_shop/domains", nil, &list); err != nil {
			return err
		}
		for _, d := range list.Domains {
			if d.Hostname == host {
				res.domain = d
			}
		}
		return nil
	}, func() bool { return res.domain.Status == "active" && res.domain.TLS.Status == "issued" })
	res.wall = time.Since(began)
	return res, err
}

// clockEnv is an emulator on a clock that moves by itself, started as the binary starts
// its world.
func clockEnv(t testing.TB, mode emulator.ClockMode) *env {
	t.Helper()
	return newEnv(t, func(o *emulator.Options) {
		o.ClockMode = mode
		o.AutoIdle = 2 * time.Millisecond
	})
}

// TestUnmodifiedAppOnScaledAndAutoClocks runs the polling app, unchanged, against a
// scaled and an auto clock: it gets through the whole happy path (18 s of emulated
// lifecycles) by polling, with nobody calling advance.
func TestUnmodifiedAppOnScaledAndAutoClocks(t *testing.T) {
	t.Parallel()
	for _, mode := range []emulator.ClockMode{emulator.ClockScaled(1000), emulator.ClockAuto} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			e := clockEnv(t, mode)
			app := pollingApp{base: e.url, token: "t-admin", every: 10 * time.Millisecond, limit: 30 * time.Second}
			res, err := app.run("app.shop.test")
			if err != nil {
				t.Fatal(err)
			}
			if res.domain.TLS.ExpiresAt == nil {
				t.Fatalf("domain %+v has no certificate", res.domain)
			}
			t.Logf("%s: %d polls, %s of wall time", mode, res.polls, res.wall)
		})
	}
}

// TestAutoClockLandsOnTransitionInstants: on an auto clock the same requests give the
// same timestamps run after run, because jumps land on the transitions' instants, never
// on the wall's; and once nothing is in flight the clock stands still (the fixture's
// certificate renewal, months away, never pulls it).
func TestAutoClockLandsOnTransitionInstants(t *testing.T) {
	t.Parallel()
	var runs [2]appResult
	var clocks [2]emulator.ClockView
	for i := range runs {
		e := clockEnv(t, emulator.ClockAuto)
		app := pollingApp{base: e.url, token: "t-admin", every: 5 * time.Millisecond, limit: 30 * time.Second}
		res, err := app.run("app.shop.test")
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = res
		clocks[i] = decode[emulator.ClockView](t, e.get("/_emulator/clock", ""))
	}
	for i, r := range runs {
		r.wall, r.polls = 0, 0
		r.deployment.BuildLogsURL = "" // the test server's port
		runs[i] = r
	}
	a, _ := json.Marshal(runs[0].deployment)
	b, _ := json.Marshal(runs[1].deployment)
	if !bytes.Equal(a, b) {
		t.Errorf("two runs, two deployments:\n%s\n%s", a, b)
	}
	a, _ = json.Marshal(runs[0].domain)
	b, _ = json.Marshal(runs[1].domain)
	if !bytes.Equal(a, b) {
		t.Errorf("two runs, two domains:\n%s\n%s", a, b)
	}
	// the deployment was created at the start and readied 1 s + 5 s later; the domain
	// went active 2 s + 10 s after it was added, at the deployment's ready instant
	created := time.Time(runs[0].deployment.CreatedAt)
	if !created.Equal(testStart) {
		t.Errorf("created at %v, want the clock's start %v", created, testStart)
	}
	if ready := runs[0].deployment.Timings.ReadyAt; ready == nil || !time.Time(*ready).Equal(testStart.Add(6*time.Second)) {
		t.Errorf("ready at %v, want %v", ready, testStart.Add(6*time.Second))
	}
	want := testStart.Add(18 * time.Second)
	for i, c := range clocks {
		if c.Mode != "auto" || !time.Time(c.Now).Equal(want) {
			t.Errorf("run %d: clock %+v after the happy path; want auto at %v (the last transition)", i, c, want)
		}
	}
}

// TestClockModesOverTheControlAPI switches a clock through every mode with PUT
// /_emulator/clock and checks what GET says, that time never moves backwards, and each
// refusal's message.
func TestClockModesOverTheControlAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	last := testStart
	steps := []struct {
		body     map[string]any
		mode     string
		rate     float64
		moveable bool // advance works
	}{
		{map[string]any{"mode": "scaled", "rate": 100}, "scaled", 100, false},
		{map[string]any{"rate": 20}, "scaled", 20, false},
		{map[string]any{"mode": "scaled:50"}, "scaled", 50, false},
		{map[string]any{"mode": "auto"}, "auto", 0, true},
		{map[string]any{"mode": "real"}, "real", 0, false},
		{map[string]any{"mode": "scaled:2.5"}, "scaled", 2.5, false},
		{map[string]any{"mode": "manual"}, "manual", 0, true},
	}
	for _, s := range steps {
		r := e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: s.body})
		mustStatus(t, r, 200)
		c := decode[emulator.ClockView](t, e.get("/_emulator/clock", ""))
		if c.Mode != s.mode || c.Rate != s.rate {
			t.Errorf("after %v: %+v, want mode %s rate %v", s.body, c, s.mode, s.rate)
		}
		if raw := string(e.get("/_emulator/clock", "").Body); s.rate == 0 && strings.Contains(raw, "rate") {
			t.Errorf("after %v: a rate shown for a clock that has none: %s", s.body, raw)
		}
		if now := time.Time(c.Now); now.Before(last) {
			t.Errorf("after %v the clock moved back from %v to %v", s.body, last, now)
		} else {
			last = now
		}
		if got := e.post("/_emulator/clock/advance", "", map[string]string{"by": "1s"}).Status; (got == 200) != s.moveable {
			t.Errorf("advance in %s: %d", s.mode, got)
		}
	}
	refusals := []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"scaled without a rate", map[string]any{"mode": "scaled"}, `needs field "rate"`},
		{"rate 0", map[string]any{"mode": "scaled", "rate": 0}, "from 1 to 10000"},
		{"rate over the bound", map[string]any{"mode": "scaled", "rate": 10001}, "from 1 to 10000"},
		{"rate in both places", map[string]any{"mode": "scaled:5", "rate": 5}, "not both"},
		{"rate of a manual clock", map[string]any{"mode": "manual", "rate": 5}, `"rate" is for a scaled clock`},
		{"rate alone on a manual clock", map[string]any{"rate": 5}, `"rate" is for a scaled clock`},
		{"a bad scaled spelling", map[string]any{"mode": "scaled:fast"}, "from 1 to 10000"},
		{"a typo", map[string]any{"mode": "auot"}, `(did you mean "auto"?)`},
		{"a rate that is a word", map[string]any{"mode": "scaled", "rate": "fast"}, "rate"},
		{"a time for a scaled clock", map[string]any{"mode": "scaled:5", "now": "2030-01-01T00:00:00Z"}, "runs by itself"},
		{"a rate key misspelt", map[string]any{"mode": "scaled", "rat": 5}, `(did you mean "rate"?)`},
	}
	for _, tc := range refusals {
		r := e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: tc.body})
		if r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(r.Err(t).Message, tc.msg) {
			t.Errorf("%s: %d %s; want 400 invalid_request with %q", tc.name, r.Status, r.Body, tc.msg)
		}
	}
	if c := decode[emulator.ClockView](t, e.get("/_emulator/clock", "")); c.Mode != "manual" {
		t.Errorf("a refused change moved the mode to %+v", c)
	}
}

// TestNamespacesWithDifferentClocks runs a scaled and an auto namespace beside the
// manual default world: each moves its own way, and the list names each mode.
func TestNamespacesWithDifferentClocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.AutoIdle = 2 * time.Millisecond }) // the app polls every 10 ms
	scaled := e.newNamespace(t, map[string]any{"clock": "scaled:1000"})
	auto := e.newNamespace(t, map[string]any{"clock": "auto"})
	for _, ns := range []nsCreated{scaled, auto} {
		app := pollingApp{base: e.url, token: ns.Tokens.Admin, every: 10 * time.Millisecond, limit: 30 * time.Second}
		if _, err := app.run("app.shop.test"); err != nil {
			t.Fatalf("namespace %s: %v", ns.Namespace, err)
		}
	}
	if c := decode[emulator.ClockView](t, e.get("/_emulator/clock", "")); c.Mode != "manual" || !time.Time(c.Now).Equal(testStart) {
		t.Errorf("the default world's clock moved: %+v", c)
	}
	if c := decode[emulator.ClockView](t, e.get(scaled.control("/clock"), "")); c.Mode != "scaled" || c.Rate != 1000 {
		t.Errorf("scaled namespace: %+v", c)
	}
	var list struct {
		Namespaces []struct{ Namespace, Clock string }
	}
	list = decode[struct {
		Namespaces []struct{ Namespace, Clock string }
	}](t, e.get("/_emulator/namespaces", ""))
	clocks := map[string]string{}
	for _, n := range list.Namespaces {
		clocks[n.Namespace] = n.Clock
	}
	if clocks[scaled.Namespace] != "scaled:1000" || clocks[auto.Namespace] != "auto" {
		t.Errorf("namespace list clocks %v", clocks)
	}
	for _, bad := range []string{"scaled:0", "scaled", "automatic"} {
		if r := e.post("/_emulator/namespaces", "", map[string]any{"clock": bad}); r.Status != 400 || !strings.Contains(r.Err(t).Message, "clock") {
			t.Errorf("clock %q: %d %s", bad, r.Status, r.Body)
		}
	}
}

// TestEmulatedDelay: a fault's delay is wall time unless delay_clock says emulated; an
// emulated delay on an auto clock is a jump of the clock (one idle time of wall), and
// the clock shows it passed.
func TestEmulatedDelay(t *testing.T) {
	t.Parallel()
	e := clockEnv(t, emulator.ClockAuto)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{
		"match": map[string]string{"method": "GET", "path": "/v1/projects"}, "delay": "1h", "delay_clock": "emulated", "times": 1,
	}), 201)
	began := time.Now()
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	if wall := time.Since(began); wall > 30*time.Second {
		t.Fatalf("an emulated hour took %s of wall time", wall)
	}
	if now := time.Time(decode[emulator.ClockView](t, e.get("/_emulator/clock", "")).Now); now.Before(testStart.Add(time.Hour)) {
		t.Errorf("clock at %v after an emulated delay of 1h from %v", now, testStart)
	}
	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"match": map[string]string{"path": "/v1/projects"}, "delay": "1s", "delay_clock": "emulted"}, `(did you mean "emulated"?)`},
		{map[string]any{"match": map[string]string{"path": "/v1/projects"}, "status": 503, "delay_clock": "emulated"}, "delay_clock goes with delay"},
	} {
		if r := e.post("/_emulator/faults", "", tc.body); r.Status != 400 || !strings.Contains(r.Err(t).Message, tc.msg) {
			t.Errorf("%v: %d %s", tc.body, r.Status, r.Body)
		}
	}
}

// TestAutoBundleReplaysAuto: a bundle records the clock's mode, and an auto world's
// bundle comes back auto.
func TestAutoBundleReplaysAuto(t *testing.T) {
	t.Parallel()
	e := clockEnv(t, emulator.ClockAuto)
	r := e.get("/_emulator/bundle", "")
	mustStatus(t, r, 200)
	fresh := newEnv(t)
	mustStatus(t, fresh.putBundle("/_emulator/bundle", r.Body), 200)
	if c := decode[emulator.ClockView](t, fresh.get("/_emulator/clock", "")); c.Mode != "auto" {
		t.Errorf("replayed clock %+v, want auto", c)
	}
}

// TestAutoClockWaitsOutRetryAfter: a 429's Retry-After is in flight on an auto clock:
// once the world is idle the clock jumps to it, so that the client's retry, whenever it
// comes, finds its window open; the header still says the emulated seconds.
func TestAutoClockWaitsOutRetryAfter(t *testing.T) {
	t.Parallel()
	e := clockEnv(t, emulator.ClockAuto)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{
		"match": map[string]string{"method": "GET", "path": "/v1/projects"}, "rate_limit": true, "retry_after": 30, "times": 1,
	}), 201)
	r := e.get("/v1/projects", "t-read")
	if r.Status != 429 || r.Header.Get("Retry-After") != "30" {
		t.Fatalf("%d Retry-After %q; want 429 and 30", r.Status, r.Header.Get("Retry-After"))
	}
	began := time.Now()
	for {
		now := time.Time(decode[emulator.ClockView](t, e.get("/_emulator/clock", "")).Now)
		if !now.Before(testStart.Add(30 * time.Second)) {
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("the auto clock stands at %v, short of the Retry-After instant", now)
		}
		time.Sleep(5 * time.Millisecond) // a client's wait, shorter than the header says
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
}

// BenchmarkPollingApp times the unmodified polling app (300 ms between polls, as an app
// written with sleeps does) through the whole happy path on each clock that moves by
// itself, with the default --auto-idle. Run it with -benchtime 1x: on the real clock
// one run takes the lifecycles' 18 s and more. docs/performance.md has the figures.
func BenchmarkPollingApp(b *testing.B) {
	for _, mode := range []emulator.ClockMode{emulator.ClockReal, emulator.ClockScaled(100), emulator.ClockAuto} {
		b.Run(string(mode), func(b *testing.B) {
			for range b.N {
				e := newEnv(b, func(o *emulator.Options) { o.ClockMode = mode })
				app := pollingApp{base: e.url, token: "t-admin", every: 300 * time.Millisecond, limit: time.Minute}
				res, err := app.run("app.shop.test")
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.polls), "polls/op")
			}
		})
	}
}

// TestNewRefusesABadClockMode: a Go caller's clock mode is checked as the command line's
// is, and kept in its canonical spelling (so that a bundle of the world replays).
func TestNewRefusesABadClockMode(t *testing.T) {
	t.Parallel()
	for _, bad := range []emulator.ClockMode{emulator.ClockScaled(0), emulator.ClockScaled(1e6), "bogus", "scaled"} {
		_, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: bad})
		var ce *emulator.ConfigError
		if !asConfigError(err, &ce) {
			t.Errorf("clock %q: %v, want a ConfigError", bad, err)
		}
	}
	if _, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: emulator.ClockManual, AutoIdle: time.Microsecond}); err == nil {
		t.Error("an auto idle of 1µs was taken")
	}
	e := newEnv(t, func(o *emulator.Options) { o.ClockMode = "scaled:2.0" })
	if c := decode[emulator.ClockView](t, e.get("/_emulator/clock", "")); c.Mode != "scaled" || c.Rate != 2 {
		t.Errorf("clock %+v", c)
	}
	r := e.get("/_emulator/bundle", "")
	mustStatus(t, r, 200)
	mustStatus(t, newEnv(t).putBundle("/_emulator/bundle", r.Body), 200) // its mode reads back
}
