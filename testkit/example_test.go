package testkit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// Start an emulator, create a deployment as the code under test would, and wait until
// it is ready. On the manual clock the build's six emulated seconds take no real time.
func ExampleStart() {
	t := exampleT() // in a test: the *testing.T
	defer t.finish()

	emu := testkit.Start(t)
	_, dpl := hosting(emu, "POST", "/v1/deployments", "hostemu-deploy",
		map[string]any{"project_id": "prj_demo", "files": map[string]string{}})
	fmt.Println("created:", dpl["status"])

	emu.WaitForDeployment(dpl["id"].(string), "ready")
	_, dpl = hosting(emu, "GET", "/v1/deployments/"+dpl["id"].(string), "hostemu-read", nil)
	fmt.Println("now:", dpl["status"], "at", emu.Now().Format(time.RFC3339))
	// Output:
	// created: queued
	// now: ready at 2026-01-01T00:00:06Z
}

// Drive an emulator that runs elsewhere, e.g. a CI service container, and fall back to
// one in process when there is none.
func ExampleConnect() {
	t := exampleT() // in a test: the *testing.T
	defer t.finish()

	var emu *testkit.Emulator
	if url := os.Getenv("HOSTEMU_URL"); url != "" {
		emu = testkit.Connect(t, url)
		emu.Reset() // a shared emulator keeps what the last test did
	} else {
		emu = testkit.Start(t)
	}
	_ = emu.URL() // point the code under test here
}

// Make the next GET /v1/projects answer 503, and see the client get it.
func ExampleEmulator_InjectFault() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t)

	f := emu.InjectFault(testkit.FaultSpec{
		Match:  testkit.FaultMatch{Method: "GET", Path: "/v1/projects"},
		Status: http.StatusServiceUnavailable,
		Times:  1,
	})
	status, body := hosting(emu, "GET", "/v1/projects", "hostemu-read", nil)
	fmt.Println(status, body["error"].(map[string]any)["code"])
	status, _ = hosting(emu, "GET", "/v1/projects", "hostemu-read", nil)
	fmt.Println(status, "then; hits:", f.Hits())
	// Output:
	// 503 service_unavailable
	// 200 then; hits: 1
}

// Fail only production creates: a 503 a retrying client can honour, then a 500, then
// success.
func ExampleEmulator_InjectFault_sequence() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t)

	emu.InjectFault(testkit.FaultSpec{
		Match: testkit.FaultMatch{
			Operation: "createDeployment",
			Body:      map[string]testkit.FaultBodyValue{"target": testkit.FaultBodyValueOf("production")},
		},
		Then: []testkit.FaultStep{{Error: "service_unavailable", RetryAfter: 2}, {Status: 500}, {Pass: true}},
	})
	create := map[string]any{"project_id": "prj_demo", "files": map[string]string{}, "target": "production"}
	for range 3 {
		status, _ := hosting(emu, "POST", "/v1/deployments", "hostemu-deploy", create)
		fmt.Println(status)
	}
	// Output:
	// 503
	// 500
	// 201
}

// Add a domain, then move the clock past DNS verification (pending 2 s, verifying 10 s
// in the default scenario).
func ExampleEmulator_Advance() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t)

	hosting(emu, "POST", "/v1/projects/prj_demo/domains", "hostemu-admin", map[string]string{"hostname": "shop.example.test"})
	fmt.Println("at start:", domainStatus(emu, "shop.example.test"))
	emu.Advance(2 * time.Second)
	fmt.Println("after 2s:", domainStatus(emu, "shop.example.test"))
	now := emu.Advance(10 * time.Second)
	fmt.Println("after 12s:", domainStatus(emu, "shop.example.test"), "at", now.Format(time.RFC3339))
	// Output:
	// at start: pending
	// after 2s: verifying
	// after 12s: active at 2026-01-01T00:00:12Z
}

// Every build fails in the failing-builds scenario.
func ExampleWithScenario() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t, testkit.WithScenario("failing-builds"))

	_, dpl := hosting(emu, "POST", "/v1/deployments", "hostemu-deploy",
		map[string]any{"project_id": "prj_demo", "files": map[string]string{}})
	emu.WaitForDeployment(dpl["id"].(string), "error")
	_, dpl = hosting(emu, "GET", "/v1/deployments/"+dpl["id"].(string), "hostemu-read", nil)
	fmt.Println(dpl["status"], dpl["error"].(map[string]any)["code"], "-", dpl["error"].(map[string]any)["message"])
	// Output:
	// error build_failed - npm run build exited with 1
}

// Check what the code under test sent.
func ExampleEmulator_Requests() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t)

	hosting(emu, "GET", "/v1/projects", "hostemu-read", nil)
	hosting(emu, "POST", "/v1/deployments", "hostemu-read", map[string]any{"project_id": "prj_demo", "files": map[string]string{}})
	hosting(emu, "POST", "/v1/deployments", "hostemu-deploy", map[string]any{"project_id": "prj_demo", "files": map[string]string{}})
	for _, r := range emu.Requests(testkit.RequestFilter{Path: "/v1/*"}) {
		fmt.Printf("%s %s %d scope=%s error=%q\n", r.Method, r.Path, r.Status, r.Scope, r.ErrorCode)
	}
	created := emu.Requests(testkit.RequestFilter{Method: "POST", Path: "/v1/deployments"})[1]
	fmt.Println("sent:", created.Body)
	// Output:
	// GET /v1/projects 200 scope=read error=""
	// POST /v1/deployments 403 scope=read error="insufficient_scope"
	// POST /v1/deployments 201 scope=deploy error=""
	// sent: {"files":{},"project_id":"prj_demo"}
}

// Check what the code under test was answered: the status, the Retry-After and
// X-RateLimit-* headers it should have acted on, the body.
func ExampleEmulator_Requests_answers() {
	t := exampleT()
	defer t.finish()
	emu := testkit.Start(t)
	emu.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Path: "/v1/projects"}, RateLimit: true, RetryAfter: 30, Times: 1})

	hosting(emu, "GET", "/v1/projects", "hostemu-read", nil) // the code under test, told to wait
	hosting(emu, "GET", "/v1/projects", "hostemu-read", nil)
	limited := emu.Requests(testkit.RequestFilter{ResponseHeader: "Retry-After"})
	r := limited[0].Response
	fmt.Println(len(limited), r.Status, r.Headers.Get("Retry-After"), r.Headers.Get("X-RateLimit-Remaining"))
	fmt.Println(emu.Requests(testkit.RequestFilter{Path: "/v1/projects"})[1].Response.Status)
	// Output:
	// 1 429 30 0
	// 200
}

// exampleTB is the testing.TB of the examples, which have no *testing.T. Embedding the
// interface satisfies its unexported method; the methods testkit calls are overridden,
// and any other would panic on the nil interface.
type exampleTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

func exampleT() *exampleTB { return &exampleTB{} }

func (t *exampleTB) Helper() {}

func (t *exampleTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// Logf writes to stderr, away from the output the examples check.
func (t *exampleTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// Errorf prints to stdout, so that the example's output no longer matches.
func (t *exampleTB) Errorf(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
}

// Failed reports whether Errorf was called (a failed example's world is not saved: it
// has no name, and the output says what failed).
func (t *exampleTB) Failed() bool { return false }

// Fatalf panics: the example fails with the message, and the deferred finish still
// shuts the emulator down.
func (t *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// finish runs the cleanups, last registered first, as a test's end does.
func (t *exampleTB) finish() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// hosting calls the hosting service as the code under test would, with token, and
// returns the status and the JSON object answered.
func hosting(emu *testkit.Emulator, method, path, token string, body any) (int, map[string]any) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, emu.URL()+path, rd)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := emu.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(fmt.Sprintf("%s %s: %d, not JSON: %v", method, path, resp.StatusCode, err))
	}
	return resp.StatusCode, out
}

// domainStatus reads a domain of prj_demo through the hosting service.
func domainStatus(emu *testkit.Emulator, hostname string) string {
	_, list := hosting(emu, "GET", "/v1/projects/prj_demo/domains?limit=100", "hostemu-read", nil)
	for _, d := range list["domains"].([]any) {
		if d := d.(map[string]any); d["hostname"] == hostname {
			return d["status"].(string)
		}
	}
	return "(not found)"
}
