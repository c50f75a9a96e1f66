package emulator_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func getDeployment(t *testing.T, e *env, id string) emulator.Deployment {
	t.Helper()
	var d emulator.Deployment
	r := e.get("/v1/deployments/"+id, "t-read")
	mustStatus(t, r, 200)
	if err := jsonUnmarshal(r.Body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Forcing a status keeps the deployment consistent: the status's timing is set and
// earlier missing ones filled, later ones cleared, the error set exactly on error (with
// the code and message asked for), and a production deployment sent back to building
// stops being production.
func TestForcedStatusesStayConsistent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	force := func(id string, body any) emulator.Deployment {
		t.Helper()
		r := e.post("/_emulator/deployments/"+id+"/status", "", body)
		mustStatus(t, r, 200)
		var d emulator.Deployment
		if err := jsonUnmarshal(r.Body, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	id := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}, "target": "production"}).JSON(t)["id"].(string)

	d := force(id, map[string]any{"status": "error", "error": map[string]string{"code": "out_of_memory", "message": "the build ran out of memory"}})
	if d.Error == nil || d.Error.Code != "out_of_memory" || d.Error.Message != "the build ran out of memory" || d.Timings.ErrorAt == nil || d.Timings.BuildingAt == nil {
		t.Fatalf("forced error with an error object: %+v", d)
	}
	d = force(id, map[string]string{"status": "ready"})
	if d.Error != nil || d.Timings.ErrorAt != nil || d.Timings.BuildingAt == nil || d.Timings.ReadyAt == nil || !d.Production {
		t.Fatalf("error forced to ready: %+v", d)
	}
	d = force(id, map[string]string{"status": "building"})
	if d.Production || d.Timings.ReadyAt != nil {
		t.Fatalf("production deployment forced back to building: %+v", d)
	}
	var p struct {
		Projects []emulator.Project `json:"projects"`
	}
	jsonUnmarshal(e.get("/v1/projects", "t-read").Body, &p)
	for _, pr := range p.Projects {
		if pr.ID == "prj_shop" && pr.ProductionDeploymentID != nil && *pr.ProductionDeploymentID == id {
			t.Fatalf("project still points at a deployment being built: %+v", pr)
		}
	}
	// the exported state is one a PUT accepts
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: e.get("/_emulator/state", "").Body}), 200)

	for _, bad := range []any{
		map[string]any{"status": "error", "error": map[string]string{"code": "Not Snake", "message": "x"}},
		map[string]any{"status": "error", "error": map[string]string{"code": "fine_code"}},
		map[string]any{"status": "error", "error": "oops"},
	} {
		if r := e.post("/_emulator/deployments/"+id+"/status", "", bad); r.Status != 400 || r.Code() != "invalid_request" {
			t.Errorf("%v: %d %s", bad, r.Status, r.Body)
		}
	}
}

// PUT /_emulator/state refuses what the API could never have made, and changes nothing.
func TestImportRefusesInconsistentState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := string(e.get("/_emulator/state", "").Body)
	for _, tc := range []struct{ name, from, to string }{
		{"upper-case hostname", `"hostname":"shop.test"`, `"hostname":"UPPER.TEST"`},
		{"empty hostname", `"hostname":"shop.test"`, `"hostname":""`},
		{"hostname with a slash", `"hostname":"shop.test"`, `"hostname":"a/b c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := replaceOnce(t, good, tc.from, tc.to)
			if r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: body}); r.Status != 400 || r.Code() != "invalid_request" {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if now := string(e.get("/_emulator/state", "").Body); now != good {
				t.Fatal("a refused import changed the state")
			}
		})
	}
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	for i := 0; i+len(from) <= len(s); i++ {
		if s[i:i+len(from)] == from {
			return s[:i] + to + s[i+len(from):]
		}
	}
	t.Fatalf("%q not in the state", from)
	return ""
}

// Overlapping clock calls (advance, set, mode switches, awaits) never fail and never
// lose a transition, with thousands pending.
func TestClockCallsNeverRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 2000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}).JSON(t)["id"].(string)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	call := func(method, path string, body any) {
		defer wg.Done()
		if r := e.do(req{Method: method, Path: path, Body: body}); r.Status != 200 {
			errs <- fmt.Sprintf("%s %s %v: %d %s", method, path, body, r.Status, r.Body)
		}
	}
	for i := 0; i < 50; i++ {
		wg.Add(4)
		go call("POST", "/_emulator/clock/advance", map[string]string{"by": "100ms"})
		go call("PUT", "/_emulator/clock", map[string]string{"mode": "manual"})
		go call("POST", "/_emulator/await", map[string]string{"deployment": ids[i*40], "status": "ready"})
		go call("GET", "/_emulator/clock", nil)
	}
	wg.Wait()
	// mode switches under advances: an advance may be refused while the clock is real
	// (400), never answered 500, and never loses the transition it had taken
	flap := func(i int) {
		defer wg.Done()
		mode := []string{"real", "manual"}[i%2]
		if r := e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"mode": mode}}); r.Status != 200 {
			errs <- fmt.Sprintf("PUT mode %s: %d %s", mode, r.Status, r.Body)
		}
	}
	advance := func() {
		defer wg.Done()
		r := e.do(req{Method: "POST", Path: "/_emulator/clock/advance", Body: map[string]string{"by": "10ms"}})
		if r.Status != 200 && !(r.Status == 400 && r.Code() == "invalid_request") {
			errs <- fmt.Sprintf("advance under mode switches: %d %s", r.Status, r.Body)
		}
	}
	for i := 0; i < 100; i++ {
		wg.Add(2)
		go flap(i)
		go advance()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/clock", Body: map[string]string{"mode": "manual"}}), 200)
	e.advance("10s")
	for _, id := range ids {
		if d := getDeployment(t, e, id); d.Status != "ready" || d.Timings.ReadyAt == nil {
			t.Fatalf("deployment %s lost a transition: %s", id, d.Status)
		}
	}
}

// An await with no timeout on a manual clock covers the active scenario's lifecycles:
// the default domain lifecycle takes 12 s, longer than the old 10 s default.
func TestAwaitDefaultCoversLifecycles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]string{"hostname": "late.shop.test"}), 201)
	r := e.post("/_emulator/await", "", map[string]string{"domain": "late.shop.test", "status": "active"})
	mustStatus(t, r, 200)
	var got struct {
		Now    emulator.Timestamp `json:"now"`
		Status string             `json:"status"`
	}
	jsonUnmarshal(r.Body, &got)
	if got.Status != "active" || time.Time(got.Now).Sub(testStart) != 12*time.Second {
		t.Fatalf("await: %s", r.Body)
	}
}

// The Date header follows the emulator clock, so X-RateLimit-Reset - Date means the
// same on a manual clock as on a real one.
func TestDateFollowsTheEmulatorClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, by := range []string{"", "90s", "30d"} {
		if by != "" {
			e.advance(by)
		}
		r := e.get("/v1/projects", "t-read")
		date, err := http.ParseTime(r.Header.Get("Date"))
		if err != nil {
			t.Fatalf("Date %q: %v", r.Header.Get("Date"), err)
		}
		now := time.Time(decode[emulator.ClockView](t, e.get("/_emulator/clock", "")).Now)
		if !date.Equal(now.Truncate(time.Second)) {
			t.Errorf("after +%s: Date %v, emulator clock %v", by, date, now)
		}
		reset, _ := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
		if d := reset - date.Unix(); d < 0 || d > 60 {
			t.Errorf("after +%s: X-RateLimit-Reset - Date = %d s", by, d)
		}
	}
}
