package testkit_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// t0 is the manual clock's start: Start's default, and the separate process's flag.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// binDir holds the hostemu binary built for the Connect variant; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "testkit-hostemu-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildHostemu builds ./cmd/hostemu once, on first need, so that a run of only the
// examples or the benchmark does not pay for it.
var buildHostemu = sync.OnceValues(func() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go tool in PATH: %w", err)
	}
	bin := filepath.Join(binDir, "hostemu")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/hostemu/hostemu/cmd/hostemu").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/hostemu: %v\n%s", err, out)
	}
	return bin, nil
})

// startProcess runs the hostemu binary as a CI service container would run it, on a
// manual clock from t0, and returns its URL; the process is killed when t ends.
func startProcess(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the hostemu binary; skipped with -short")
	}
	bin, err := buildHostemu()
	if err != nil {
		t.Skipf("cannot build the hostemu binary, so Connect is not tested against a process: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0",
		"--clock", "manual", "--clock-start", t0.Format(time.RFC3339)}, args...)...)
	// HTTPS on a free port and the CA in memory: never 4743, nor the user's config directory
	// and its standard input a pipe this process holds: a test binary killed on a timeout
	// leaves no hostemu behind (--watch-stdin)
	cmd.Env = append(withoutHostemuVars(os.Environ()), "HOSTEMU_TLS_ADDR=127.0.0.1:0", "HOSTEMU_CA_DIR=:memory:", "HOSTEMU_WATCH_STDIN=1")
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		first <- sc.Text()
		io.Copy(io.Discard, stdout) // the rest of the banner
	}()
	select {
	case line := <-first:
		url, ok := strings.CutPrefix(line, "hostemu listening on ")
		if !ok {
			t.Fatalf("first line of stdout is %q, not \"hostemu listening on URL\"; stderr:\n%s", line, stderr)
		}
		return url
	case <-time.After(10 * time.Second):
		t.Fatalf("hostemu printed no first line within 10 s; stderr:\n%s", stderr)
		return ""
	}
}

func withoutHostemuVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOSTEMU_") {
			out = append(out, kv)
		}
	}
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// recipes are what users do with an Emulator, each from a fresh world on a manual clock
// at t0 with the embedded fixtures.
var recipes = []struct {
	name string
	run  func(t *testing.T, e *testkit.Emulator)
}{
	{"deployment becomes ready", func(t *testing.T, e *testkit.Emulator) {
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeployment(id, "ready")
		expectField(t, getDeployment(t, e, id), "status", "ready")
		expectTime(t, "Now after the build", e.Now(), t0.Add(6*time.Second))
	}},
	{"fault answers 503 and counts its hits", func(t *testing.T, e *testkit.Emulator) {
		f := e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "GET", Path: "/v1/projects"}, Status: 503})
		if f.ID() == "" {
			t.Fatal("the fault has no id")
		}
		for range 2 {
			status, body := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil)
			if status != 503 || errorCode(body) != "service_unavailable" {
				t.Fatalf("with the fault: %d %v", status, body)
			}
		}
		if n := f.Hits(); n != 2 {
			t.Errorf("Hits = %d, want 2", n)
		}
		f.Remove()
		if status, body := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil); status != 200 {
			t.Errorf("after Remove: %d %v", status, body)
		}
	}},
	{"advance moves the clock and the lifecycles", func(t *testing.T, e *testkit.Emulator) {
		expectTime(t, "Now at start", e.Now(), t0)
		addDomain(t, e, "app.example.test")
		expectField(t, domain(t, e, "app.example.test"), "status", "pending")
		expectTime(t, "Advance(2s)", e.Advance(2*time.Second), t0.Add(2*time.Second))
		expectField(t, domain(t, e, "app.example.test"), "status", "verifying")
		e.Advance(10 * time.Second)
		expectField(t, domain(t, e, "app.example.test"), "status", "active")
		expectTime(t, "Now after 12s", e.Now(), t0.Add(12*time.Second))
		e.WaitForDomain("app.example.test", "active") // holds already: no time passes
		expectTime(t, "Now after WaitForDomain", e.Now(), t0.Add(12*time.Second))
	}},
	{"reset returns to the start-up world", func(t *testing.T, e *testkit.Emulator) {
		id := createDeployment(t, e, e.DeployToken(), nil)
		tok := e.Token("read")
		e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Path: "/v1/projects"}, Status: 500})
		e.UseScenario("failing-builds")
		e.Advance(time.Hour)
		e.Reset()
		if status, body := hosting(e, "GET", "/v1/deployments/"+id, e.ReadToken(), nil); status != 404 || errorCode(body) != "deployment_not_found" {
			t.Errorf("deployment after Reset: %d %v", status, body)
		}
		if status, body := hosting(e, "GET", "/v1/projects", tok, nil); status != 401 || errorCode(body) != "invalid_token" {
			t.Errorf("minted token after Reset: %d %v", status, body)
		}
		if status, body := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil); status != 200 {
			t.Errorf("faulted route after Reset: %d %v", status, body)
		}
		expectTime(t, "Now after Reset", e.Now(), t0)
		id = createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeployment(id, "ready") // the default scenario again
		e.ClearRequests()
		if rs := e.Requests(testkit.RequestFilter{}); len(rs) != 0 {
			t.Errorf("journal after ClearRequests: %v", rs)
		}
	}},
	{"journal records the requests", func(t *testing.T, e *testkit.Emulator) {
		var wg sync.WaitGroup
		wg.Go(func() { // the code under test, calling from elsewhere
			for range 3 {
				hosting(e, "GET", "/v1/projects", e.ReadToken(), nil)
			}
		})
		e.WaitForRequests(testkit.RequestFilter{Method: "GET", Path: "/v1/projects"}, 3)
		wg.Wait()
		createDeployment(t, e, e.DeployToken(), map[string]string{"FEATURE": "on"})
		if rs := e.Requests(testkit.RequestFilter{}); len(rs) != 4 {
			t.Fatalf("journal holds %d requests, want 4: %v", len(rs), rs)
		}
		rs := e.Requests(testkit.RequestFilter{Method: "post", Path: "/v1/deploy*"})
		if len(rs) != 1 || rs[0].Status != 201 || rs[0].Scope != "deploy" || !strings.Contains(rs[0].Body, `"FEATURE":"on"`) {
			t.Fatalf("POST entries: %+v", rs)
		}
		// the journal's other filters, and a wait counted with them
		if rs := e.Requests(testkit.RequestFilter{Status: 201, Scope: "deploy", Body: "env.FEATURE=on"}); len(rs) != 1 {
			t.Fatalf("status, scope and body filters: %+v", rs)
		}
		last := e.Requests(testkit.RequestFilter{})[3].Seq
		if rs := e.Requests(testkit.RequestFilter{Since: last - 2, Limit: 1, Service: "hosting"}); len(rs) != 1 || rs[0].Seq != last-1 {
			t.Fatalf("since and limit: %+v", rs)
		}
		e.WaitForRequests(testkit.RequestFilter{Status: 201, Since: last - 1}, 1)
		// the answers, and the header filters on the request and on its answer
		e.WaitForRequests(testkit.RequestFilter{ResponseHeader: "Content-Type:application/json*", Header: "Authorization"}, 4)
		if rs := e.Requests(testkit.RequestFilter{Status: 201}); len(rs) != 1 || rs[0].Response == nil || !strings.Contains(rs[0].Response.Body, `"id":"dpl_`) {
			t.Fatalf("the 201's answer: %+v", rs)
		}
		e.ClearRequests()
		if rs := e.Requests(testkit.RequestFilter{}); len(rs) != 0 {
			t.Errorf("after ClearRequests: %v", rs)
		}
	}},
	{"forced deployment status", func(t *testing.T, e *testkit.Emulator) {
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.SetDeploymentStatus(id, "error")
		e.WaitForDeploymentWithin(id, "error", 0)
		d := getDeployment(t, e, id)
		expectField(t, d, "status", "error")
		if d["error"] == nil {
			t.Errorf("a deployment forced to error has no error object: %v", d)
		}
		e.Advance(time.Minute) // its lifecycle was dropped
		expectField(t, getDeployment(t, e, id), "status", "error")
	}},
	{"forced domain status", func(t *testing.T, e *testkit.Emulator) {
		addDomain(t, e, "forced.example.test")
		e.SetDomainStatus("forced.example.test", "active")
		d := domain(t, e, "forced.example.test")
		expectField(t, d, "status", "active")
		if tls, _ := d["tls"].(map[string]any); tls["status"] != "issued" {
			t.Errorf("an active domain's certificate: %v", d["tls"])
		}
		expectTime(t, "Now", e.Now(), t0)
	}},
	{"instant scenario", func(t *testing.T, e *testkit.Emulator) {
		e.UseScenario("instant")
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeploymentWithin(id, "ready", 0)
		expectTime(t, "Now", e.Now(), t0)
	}},
	{"getters, forced errors and waits that do not fail", func(t *testing.T, e *testkit.Emulator) {
		id := createDeployment(t, e, e.DeployToken(), nil)
		if d := e.Deployment(id); d.ID != id || d.Status != "queued" {
			t.Errorf("Deployment: %+v", d)
		}
		e.SetDeploymentError(id, "oom_killed", "the build ran out of memory")
		if d := e.Deployment(id); d.Status != "error" || d.Error == nil || d.Error.Code != "oom_killed" {
			t.Errorf("forced error: %+v", d)
		}
		if e.TryWaitForDeployment(id, "ready", time.Minute) {
			t.Error("a failed build became ready")
		}
		addDomain(t, e, "never.example.test")
		e.SetDomainError("never.example.test", "dns_missing", "no TXT record")
		if e.TryWaitForDomain("never.example.test", "active", time.Hour) {
			t.Error("a failed domain became active")
		}
		if d := e.Domain("never.example.test"); d.Status != "error" {
			t.Errorf("Domain: %+v", d)
		}
		id = createDeployment(t, e, e.DeployToken(), nil)
		if !e.TryWaitForDeployment(id, "ready", time.Minute) {
			t.Error("a build never became ready")
		}
	}},
	{"token scopes", func(t *testing.T, e *testkit.Emulator) {
		read, deploy, admin := e.Token("read"), e.Token("deploy"), e.Token("admin")
		if read == deploy || read == admin || read == e.Token("read") {
			t.Errorf("tokens are not fresh: %q %q %q", read, deploy, admin)
		}
		for _, tok := range []string{read, deploy, admin, e.ReadToken()} {
			if status, body := hosting(e, "GET", "/v1/projects", tok, nil); status != 200 {
				t.Errorf("GET /v1/projects with %s: %d %v", tok, status, body)
			}
		}
		status, body := hosting(e, "POST", "/v1/deployments", read, map[string]any{"project_id": "prj_demo", "files": map[string]string{}})
		if msg, _ := errorOf(body)["message"].(string); status != 403 || errorCode(body) != "insufficient_scope" || !strings.Contains(msg, "deploy") {
			t.Errorf("POST /v1/deployments with a read token: %d %v", status, body)
		}
		createDeployment(t, e, deploy, nil)
		createDeployment(t, e, admin, nil)
	}},
}

// TestRecipes runs every recipe against (a) Start, one emulator each, in parallel;
// (b) Connect to one separate hostemu process, one recipe after the other, each in a
// namespace of its own; (c) Connect to one other process, every recipe at once, each in
// its namespace; and (d) Shared, the default namespace, with a Reset between recipes.
func TestRecipes(t *testing.T) {
	t.Run("start", func(t *testing.T) {
		t.Parallel()
		for _, rc := range recipes {
			t.Run(rc.name, func(t *testing.T) {
				t.Parallel()
				rc.run(t, testkit.Start(t))
			})
		}
	})
	t.Run("connect", func(t *testing.T) {
		t.Parallel()
		url := startProcess(t, "--control-token", "ctl-secret")
		for _, rc := range recipes {
			t.Run(rc.name, func(t *testing.T) {
				e := testkit.Connect(t, url, testkit.WithControlToken("ctl-secret"))
				if e.Server() != nil || e.Namespace() == "" {
					t.Errorf("Connect: Server %v, Namespace %q", e.Server(), e.Namespace())
				}
				rc.run(t, e)
			})
		}
	})
	t.Run("connect in parallel", func(t *testing.T) {
		t.Parallel()
		url := startProcess(t)
		for _, rc := range recipes {
			t.Run(rc.name, func(t *testing.T) {
				t.Parallel()
				rc.run(t, testkit.Connect(t, url))
			})
		}
	})
	t.Run("shared", func(t *testing.T) {
		t.Parallel()
		url := startProcess(t)
		shared := testkit.Connect(t, url, testkit.Shared())
		if shared.Namespace() != "" || shared.ReadToken() != "hostemu-read" {
			t.Errorf("Shared: namespace %q, read token %q", shared.Namespace(), shared.ReadToken())
		}
		for _, rc := range recipes {
			t.Run(rc.name, func(t *testing.T) {
				e := shared.With(t)
				e.Reset()
				rc.run(t, e)
			})
		}
	})
}

// TestFailuresNameTheError checks that a failing call stops the test with the call and
// the emulator's code and message.
func TestFailuresNameTheError(t *testing.T) {
	t.Parallel()
	e := testkit.Start(t)
	id := createDeployment(t, e, e.DeployToken(), nil)
	for _, tc := range []struct {
		name string
		call func(e *testkit.Emulator)
		want []string
	}{
		{"unknown scope", func(e *testkit.Emulator) { e.Token("root") }, []string{"POST /_emulator/tokens", "400 invalid_request", `"root"`}},
		{"unknown scenario", func(e *testkit.Emulator) { e.UseScenario("nope") }, []string{"404 scenario_not_found", `"nope"`}},
		{"unknown deployment", func(e *testkit.Emulator) { e.SetDeploymentStatus("dpl_nope", "ready") }, []string{"404 deployment_not_found"}},
		{"bad status", func(e *testkit.Emulator) { e.SetDomainStatus("demo-shop.test", "gone") }, []string{"400 invalid_request", "status"}},
		{"await times out", func(e *testkit.Emulator) { e.WaitForDeploymentWithin(id, "error", time.Minute) }, []string{"408 await_timeout", "1m0s"}},
		{"await of an unknown deployment", func(e *testkit.Emulator) { e.WaitForDeployment("dpl_nope", "ready") }, []string{"404 deployment_not_found"}},
		{"negative advance", func(e *testkit.Emulator) { e.Advance(-time.Second) }, []string{"400 invalid_request", `"by"`}},
		{"removed fault", func(e *testkit.Emulator) {
			f := e.InjectFault(testkit.FaultSpec{Status: 500, Match: testkit.FaultMatch{Path: "/nowhere", Service: "edge"}})
			f.Remove()
			f.Hits()
		}, []string{"fault flt_", "is gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := fatalOf(t, func(tb testing.TB) { tc.call(e.With(tb)) })
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("failure %q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestStartOptions(t *testing.T) {
	t.Parallel()
	t.Run("control token", func(t *testing.T) {
		t.Parallel()
		e := testkit.Start(t, testkit.WithControlToken("ctl"))
		expectTime(t, "Now", e.Now(), t0)
		resp, err := e.Client().Get(e.URL() + "/_emulator/clock")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("control API without the token: %d", resp.StatusCode)
		}
		testkit.Connect(t, e.URL(), testkit.WithControlToken("ctl")).Now()
		msg := fatalOf(t, func(tb testing.TB) { testkit.Connect(tb, e.URL()) })
		if !strings.Contains(msg, "401 missing_token") {
			t.Errorf("Connect without the control token: %q", msg)
		}
	})
	t.Run("real clock and a scenario", func(t *testing.T) {
		t.Parallel()
		before := time.Now().Add(-time.Second)
		e := testkit.Start(t, testkit.WithClock(testkit.ClockReal), testkit.WithScenario("instant"))
		if now := e.Now(); now.Before(before) || now.After(time.Now().Add(time.Second)) {
			t.Errorf("a real clock without WithClockStart reads %s, not about now", now)
		}
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeployment(id, "ready") // the server waits, on the real clock
		if msg := fatalOf(t, func(tb testing.TB) { e.With(tb).Advance(time.Second) }); !strings.Contains(msg, "400 invalid_request") {
			t.Errorf("Advance on a real clock: %q", msg)
		}
	})
	t.Run("clock start, seed and cipher URL", func(t *testing.T) {
		t.Parallel()
		start := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
		e := testkit.Start(t, testkit.WithClockStart(start), testkit.WithSeed(7))
		expectTime(t, "Now", e.Now(), start)
		if e.CipherURL() != e.URL() || e.Server() == nil || e.Server().URL() != e.URL() {
			t.Errorf("URL %s, CipherURL %s, Server %v", e.URL(), e.CipherURL(), e.Server())
		}
		if !strings.HasPrefix(e.URL(), "http://127.0.0.1:") {
			t.Errorf("URL %s is not on loopback", e.URL())
		}
	})
	t.Run("bad scenario stops the start", func(t *testing.T) {
		t.Parallel()
		if msg := fatalOf(t, func(tb testing.TB) { testkit.Start(tb, testkit.WithScenario("nope")) }); !strings.Contains(msg, "nope") {
			t.Errorf("Start with an unknown scenario: %q", msg)
		}
	})
	t.Run("cleanup shuts it down", func(t *testing.T) {
		t.Parallel()
		var url string
		t.Run("inner", func(t *testing.T) { url = testkit.Start(t).URL() })
		if resp, err := http.Get(url + "/_emulator/health"); err == nil {
			resp.Body.Close()
			t.Errorf("the emulator still answers after its test ended: %s", resp.Status)
		}
	})
}

func TestConnectOptions(t *testing.T) {
	t.Parallel()
	t.Run("no emulator there", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		start := time.Now()
		msg := fatalOf(t, func(tb testing.TB) { testkit.Connect(tb, url) })
		if !strings.Contains(msg, "no hostemu answers at "+url) {
			t.Errorf("Connect to nothing: %q", msg)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("Connect gave up after %s", took)
		}
	})
	t.Run("start-only options", func(t *testing.T) {
		t.Parallel()
		msg := fatalOf(t, func(tb testing.TB) {
			testkit.Connect(tb, "http://127.0.0.1:1", testkit.WithScenariosDir("x"), testkit.WithoutTLS())
		})
		if !strings.Contains(msg, "WithScenariosDir, WithoutTLS applies only to Start") {
			t.Errorf("Connect with start options: %q", msg)
		}
		msg = fatalOf(t, func(tb testing.TB) {
			testkit.Connect(tb, "http://127.0.0.1:1", testkit.Shared(), testkit.WithSeed(2))
		})
		if !strings.Contains(msg, "WithSeed does not apply with Shared") {
			t.Errorf("Shared with world options: %q", msg)
		}
	})
	t.Run("scenario, cipher URL and a /v1 URL", func(t *testing.T) {
		t.Parallel()
		s := testkit.Start(t)
		e := testkit.Connect(t, s.URL()+"/v1/", testkit.WithScenario("instant"), testkit.WithCipherURL("http://cipher.test/"))
		if e.URL() != s.URL() || e.CipherURL() != "http://cipher.test" {
			t.Errorf("URL %s, CipherURL %s", e.URL(), e.CipherURL())
		}
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeploymentWithin(id, "ready", 0) // instant: the namespace's scenario
		e.Reset()
		id = createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeploymentWithin(id, "ready", 0) // and still its start-up scenario after Reset
		if status, _ := hosting(s, "GET", "/v1/deployments/"+id, s.ReadToken(), nil); status != 404 {
			t.Errorf("the namespace's deployment in the default world: %d", status)
		}
	})
	t.Run("shared: scenario switched at connect", func(t *testing.T) {
		t.Parallel()
		s := testkit.Start(t)
		e := testkit.Connect(t, s.URL(), testkit.Shared(), testkit.WithScenario("instant"))
		id := createDeployment(t, e, e.DeployToken(), nil)
		e.WaitForDeploymentWithin(id, "ready", 0) // instant: switched at connect
		e.Reset()
		id = createDeployment(t, e, e.DeployToken(), nil)
		if msg := fatalOf(t, func(tb testing.TB) { e.With(tb).WaitForDeploymentWithin(id, "ready", 0) }); !strings.Contains(msg, "await_timeout") {
			t.Errorf("after Reset, the start-up scenario should be back: %q", msg)
		}
	})
}

// recordingTB stands in for a test that is expected to fail: Fatalf records the
// message and ends the goroutine, as testing.T's does; the rest is the real test's.
type recordingTB struct {
	testing.TB
	mu    sync.Mutex
	fatal string
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// fatalOf runs f with a recordingTB and returns its Fatalf message ("" for none).
func fatalOf(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	r := &recordingTB{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal == "" {
		t.Error("the call did not fail the test")
	}
	return r.fatal
}

func createDeployment(t *testing.T, e *testkit.Emulator, token string, env map[string]string) string {
	t.Helper()
	status, body := hosting(e, "POST", "/v1/deployments", token, map[string]any{"project_id": "prj_demo", "files": map[string]string{}, "env": env})
	if status != 201 || body["status"] != "queued" {
		t.Fatalf("POST /v1/deployments: %d %v", status, body)
	}
	return body["id"].(string)
}

func getDeployment(t *testing.T, e *testkit.Emulator, id string) map[string]any {
	t.Helper()
	status, body := hosting(e, "GET", "/v1/deployments/"+id, e.ReadToken(), nil)
	if status != 200 {
		t.Fatalf("GET /v1/deployments/%s: %d %v", id, status, body)
	}
	return body
}

func addDomain(t *testing.T, e *testkit.Emulator, hostname string) {
	t.Helper()
	if status, body := hosting(e, "POST", "/v1/projects/prj_demo/domains", e.AdminToken(), map[string]string{"hostname": hostname}); status != 201 {
		t.Fatalf("adding %s: %d %v", hostname, status, body)
	}
}

func domain(t *testing.T, e *testkit.Emulator, hostname string) map[string]any {
	t.Helper()
	_, list := hosting(e, "GET", "/v1/projects/prj_demo/domains?limit=100", e.ReadToken(), nil)
	ds, _ := list["domains"].([]any)
	for _, d := range ds {
		if d := d.(map[string]any); d["hostname"] == hostname {
			return d
		}
	}
	t.Fatalf("no domain %s in %v", hostname, list)
	return nil
}

func errorOf(body map[string]any) map[string]any {
	m, _ := body["error"].(map[string]any)
	return m
}

func errorCode(body map[string]any) string {
	c, _ := errorOf(body)["code"].(string)
	return c
}

func expectField(t *testing.T, m map[string]any, key string, want any) {
	t.Helper()
	if m[key] != want {
		t.Errorf("%s = %v, want %v (in %v)", key, m[key], want, m)
	}
}

func expectTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, got.Format(time.RFC3339Nano), want.Format(time.RFC3339))
	}
}

// EdgeClient fetches a deployment's exact URL, as the API gave it (https on Start's
// HTTPS listener's port; http on the plain one WithoutTLS), whether or not its host
// resolves: for Start, Connect (through the proxy, in its namespace) and WithoutTLS.
func TestEdgeClient(t *testing.T) {
	t.Parallel()
	emu := testkit.Start(t)
	for _, tc := range []struct {
		name   string
		emu    func(t *testing.T) *testkit.Emulator
		scheme string
	}{
		{"Start", func(t *testing.T) *testkit.Emulator { return emu.With(t) }, "https"},
		{"Connect", func(t *testing.T) *testkit.Emulator { return testkit.Connect(t, emu.URL()) }, "https"},
		{"WithoutTLS", func(t *testing.T) *testkit.Emulator { return testkit.Start(t, testkit.WithoutTLS()) }, "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.emu(t)
			var created struct{ ID, URL string }
			req, _ := http.NewRequest("POST", e.URL()+"/v1/deployments", strings.NewReader(`{"project_id":"prj_demo","files":{"index.html":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}`))
			req.Header.Set("Authorization", "Bearer "+e.Token("deploy"))
			req.Header.Set("Content-Type", "application/json")
			res, err := e.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			json.NewDecoder(res.Body).Decode(&created)
			res.Body.Close()
			if u, err := url.Parse(created.URL); err != nil || u.Scheme != tc.scheme || u.Port() == "" {
				t.Errorf("url %q: want %s with the listener's port", created.URL, tc.scheme)
			}
			e.WaitForDeployment(created.ID, "ready")
			res, err = e.EdgeClient().Get(created.URL)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("X-Hostemu-Deployment") != created.ID || (res.TLS == nil) != (tc.scheme == "http") {
				t.Fatalf("GET %s: %d %v", created.URL, res.StatusCode, res.Header)
			}
		})
	}
}

// Over real TLS, a custom domain's certificate is what its tls object says, checked at
// the emulator's time: months ahead on a manual clock, after renewals, it still
// verifies; with Connect, through the proxy and ca.pem; WithoutTLS, through CONNECT too.
func TestEdgeClientTLS(t *testing.T) {
	t.Parallel()
	emu := testkit.Start(t)
	emu.Advance(200 * 24 * time.Hour) // two renewals later
	check := func(t *testing.T, e *testkit.Emulator) {
		var list struct {
			Domains []struct {
				Hostname string
				TLS      struct {
					ExpiresAt time.Time `json:"expires_at"`
					Issuer    string
				}
			}
		}
		req, _ := http.NewRequest("GET", e.URL()+"/v1/projects/prj_demo/domains", nil)
		req.Header.Set("Authorization", "Bearer "+e.Token("read"))
		res, err := e.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		res, err = e.EdgeClient().Get("https://demo-shop.test/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		leaf, found := res.TLS.PeerCertificates[0], false
		for _, d := range list.Domains {
			if d.Hostname == "demo-shop.test" {
				found = true
				if !leaf.NotAfter.Equal(d.TLS.ExpiresAt) || leaf.Issuer.CommonName != d.TLS.Issuer {
					t.Errorf("served %s until %v, the API says %s until %v", leaf.Issuer.CommonName, leaf.NotAfter, d.TLS.Issuer, d.TLS.ExpiresAt)
				}
			}
		}
		if !found {
			t.Fatalf("no demo-shop.test in %+v", list)
		}
		if now := e.Now(); leaf.NotAfter.Before(now) || leaf.NotBefore.After(now) {
			t.Errorf("valid %v to %v: not at the emulator's time %v", leaf.NotBefore, leaf.NotAfter, now)
		}
	}
	t.Run("Start", func(t *testing.T) { check(t, emu.With(t)) })
	t.Run("Connect", func(t *testing.T) { check(t, testkit.Connect(t, emu.URL())) })
	t.Run("WithoutTLS", func(t *testing.T) {
		e := testkit.Start(t, testkit.WithoutTLS())
		e.Advance(200 * 24 * time.Hour)
		if e.TLSURL() != "" {
			t.Errorf("TLSURL %q", e.TLSURL())
		}
		check(t, e)
	})
}

func TestWithScenarioYAML(t *testing.T) {
	t.Parallel()
	e := testkit.Start(t, testkit.WithScenarioYAML("name: quick\ndescription: builds in a second\ndeployments:\n  lifecycle:\n    - {status: queued}\n    - {status: building, after: 0s}\n    - {status: ready, after: 1s}\n"), testkit.WithScenario("quick"))
	id := createDeployment(t, e, e.DeployToken(), nil)
	e.WaitForDeployment(id, "ready")
	expectTime(t, "Now", e.Now(), t0.Add(time.Second))
	if msg := fatalOf(t, func(tb testing.TB) { testkit.Start(tb, testkit.WithScenarioYAML("name: [")) }); msg == "" {
		t.Error("a bad scenario document started")
	}
}

// Under Connect an inline scenario goes to the test's namespace at creation: that
// namespace runs it, and the server's default world and other namespaces do not know it.
func TestWithScenarioYAMLUnderConnect(t *testing.T) {
	t.Parallel()
	srv := testkit.Start(t, testkit.WithoutTLS())
	quick := "name: quick\ndescription: builds in a second\ndeployments:\n  lifecycle:\n    - {status: queued}\n    - {status: building, after: 0s}\n    - {status: ready, after: 1s}\n"
	e := testkit.Connect(t, srv.URL(), testkit.WithScenarioYAML(quick), testkit.WithScenario("quick"))
	id := createDeployment(t, e, e.DeployToken(), nil)
	e.WaitForDeployment(id, "ready")
	expectTime(t, "Now", e.Now(), t0.Add(time.Second))
	e.Reset() // the namespace's start-up scenario stays the inline one
	id = createDeployment(t, e, e.DeployToken(), nil)
	e.WaitForDeployment(id, "ready")
	expectTime(t, "Now after a reset", e.Now(), t0.Add(time.Second))
	other := testkit.Connect(t, srv.URL())
	if msg := fatalOf(t, func(tb testing.TB) { other.With(tb).UseScenario("quick") }); !strings.Contains(msg, "scenario_not_found") {
		t.Errorf("another namespace knows the inline scenario: %q", msg)
	}
	if msg := fatalOf(t, func(tb testing.TB) {
		testkit.Connect(tb, srv.URL(), testkit.WithScenarioYAML("name: bad\ndeployments: {lifecycle: [{status: shipped}]}\n"))
	}); !strings.Contains(msg, "scenarios[0]") {
		t.Errorf("a bad inline scenario under Connect: %q", msg)
	}
}

// Domain looks past the first page of projects and of a project's domains.
func TestDomainPastTheFirstPage(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("tokens:\n  - {token: t-read, scope: read}\n  - {token: t-admin, scope: admin}\nprojects:\n")
	for i := range 105 {
		fmt.Fprintf(&b, "  - id: prj_p%03d\n    name: p%03d\n", i, i)
	}
	b.WriteString("    domains:\n")
	for i := range 105 {
		fmt.Fprintf(&b, "      - {hostname: d%03d.example.test, status: active}\n", i)
	}
	path := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e := testkit.Start(t, testkit.WithFixtures(path))
	for _, h := range []string{"d000.example.test", "d104.example.test"} {
		if d := e.Domain(h); d.Hostname != h || d.Status != "active" {
			t.Errorf("Domain(%s): %+v", h, d)
		}
	}
}
