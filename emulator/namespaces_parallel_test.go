package emulator_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// Thirty-two clients on one server, each in its own namespace, each running a whole
// workflow at once; none sees another's deployments, faults, clock, scenario, journal or
// rate limits.
func TestNamespacesIsolateParallelClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	t0 := testStart
	for i := range 32 {
		t.Run(fmt.Sprint("client", i), func(t *testing.T) {
			t.Parallel()
			n := e.newNamespace(t, map[string]any{"clock": "manual", "clock_start": t0.Format(time.RFC3339)})
			ctl := func(method, path string, body any) resp {
				return e.do(req{Method: method, Path: n.control(path), Body: body})
			}
			mark := fmt.Sprintf("client-%d", i)
			// create, await ready on the manual clock, promote
			r := e.post("/v1/deployments", n.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "env": map[string]string{"MARK": mark}})
			mustStatus(t, r, 201)
			id := decode[emulator.DeploymentCreated](t, r).ID
			mustStatus(t, ctl("POST", "/await", map[string]any{"deployment": id, "status": "ready"}), 200)
			if now := decode[emulator.ClockView](t, ctl("GET", "/clock", nil)).Now; !time.Time(now).Equal(t0.Add(6 * time.Second)) {
				t.Errorf("clock after the build: %v (another client moved it?)", time.Time(now))
			}
			mustStatus(t, e.post("/v1/deployments/"+id+"/promote", n.Tokens.Deploy, nil), 200)
			list := e.get("/v1/deployments?limit=100", n.Tokens.Read)
			if c := strings.Count(string(list.Body), "client-"); c != 1 || !strings.Contains(string(list.Body), mark) {
				t.Errorf("sees %d clients' deployments", c)
			}
			// a fault of its own
			f := ctl("POST", "/faults", map[string]any{"match": map[string]string{"path": "/v1/projects"}, "status": 503})
			mustStatus(t, f, 201)
			if r := e.get("/v1/projects", n.Tokens.Read); r.Status != 503 {
				t.Errorf("own fault: %d", r.Status)
			}
			if faults := ctl("GET", "/faults", nil); strings.Count(string(faults.Body), `"id"`) != 1 {
				t.Errorf("faults: %s", faults.Body)
			}
			// reset: back to the start, fault and journal gone
			mustStatus(t, ctl("POST", "/reset", nil), 200)
			if r := e.get("/v1/deployments/"+id, n.Tokens.Read); r.Status != 404 {
				t.Errorf("deployment after reset: %d", r.Status)
			}
			mustStatus(t, e.get("/v1/projects", n.Tokens.Read), 200)
			if rs := ctl("GET", "/requests", nil); strings.Count(string(rs.Body), `"method"`) != 2 {
				t.Errorf("journal after reset holds other requests: %s", rs.Body)
			}
			// a scenario switch: builds fail here only
			mustStatus(t, ctl("PUT", "/scenarios/active", map[string]string{"name": "failing-builds"}), 200)
			r = e.post("/v1/deployments", n.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
			mustStatus(t, r, 201)
			failed := decode[emulator.DeploymentCreated](t, r).ID
			mustStatus(t, ctl("POST", "/await", map[string]any{"deployment": failed, "status": "error"}), 200)
			// rate-limit exhaustion, of its own token only
			mustStatus(t, ctl("PUT", "/scenarios/active", map[string]string{"name": "rate-limited"}), 200)
			limited := 0
			for range 4 {
				if e.get("/v1/projects", n.Tokens.Read).Status == 429 {
					limited++
				}
			}
			if limited == 0 {
				t.Error("never rate limited")
			}
			if rs := ctl("GET", "/requests", nil); strings.Contains(string(rs.Body), "client-") && !strings.Contains(string(rs.Body), mark) {
				t.Errorf("journal holds another client's request")
			}
		})
	}
	t.Cleanup(func() {
		// the default world saw none of it
		if r := e.get("/_emulator/requests", ""); strings.Contains(string(r.Body), `"method"`) {
			t.Errorf("default journal: %.300s", r.Body)
		}
	})
}

// Creating and deleting 1,000 namespaces leaves no goroutine and no timer behind.
func TestNamespacesLeakNothing(t *testing.T) {
	e := newEnv(t)
	cycle := func() {
		n := e.newNamespace(t, map[string]any{"clock": "real"}) // a real clock runs its scheduler
		mustStatus(t, e.post("/v1/deployments", n.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
		mustStatus(t, e.do(req{Method: "DELETE", Path: n.control("")}), 200)
	}
	cycle() // the client's connection and the server's goroutines for it
	base := runtime.NumGoroutine()
	for range 1000 {
		cycle()
	}
	var now int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		if now = runtime.NumGoroutine(); now <= base+2 {
			break
		}
		time.Sleep(time.Millisecond) // goroutines that are ending: nothing to wait on
	}
	if now > base+2 {
		t.Errorf("goroutines: %d before, %d after 1,000 namespaces", base, now)
	}
	if r := e.get("/_emulator/namespaces", ""); strings.Contains(string(r.Body), "ns_") {
		t.Errorf("namespaces left: %.200s", r.Body)
	}
}
