package emulator_test

import (
	"testing"
)

// GET /v1/deployments/{id} is answered from rendered bytes while nothing changed, and
// never stale: a forced status, a promote, a reset and another Host each show at once.
func TestDeploymentAnswerIsNeverStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	get := func(host string) map[string]any {
		t.Helper()
		r := e.do(req{Method: "GET", Path: "/v1/deployments/dpl_second", Token: "t-read", Host: host})
		mustStatus(t, r, 200)
		return r.JSON(t)
	}
	first := get("127.0.0.1:4700")
	if again := get("127.0.0.1:4700"); again["status"] != "ready" || again["production"] != false {
		t.Fatalf("second read %v", again)
	}
	if other := get("localhost:9999"); other["build_logs_url"] == first["build_logs_url"] {
		t.Fatalf("another Host got the first Host's build_logs_url %v", other["build_logs_url"])
	}
	mustStatus(t, e.post("/_emulator/deployments/dpl_second/status", "", map[string]any{"status": "error"}), 200)
	if d := get("127.0.0.1:4700"); d["status"] != "error" {
		t.Fatalf("after a forced status: %v", d["status"])
	}
	mustStatus(t, e.post("/_emulator/deployments/dpl_second/status", "", map[string]any{"status": "ready"}), 200)
	mustStatus(t, e.post("/v1/deployments/dpl_second/promote", "t-deploy", nil), 200)
	if d := get("127.0.0.1:4700"); d["production"] != true {
		t.Fatalf("after a promote: production %v", d["production"])
	}
	// a namespace holds the same ids: its answers are its own
	n := e.newNamespace(t, nil)
	mustStatus(t, e.post(n.control("/deployments/dpl_second/status"), "", map[string]any{"status": "error"}), 200)
	if r := e.get("/v1/deployments/dpl_second", n.Tokens.Read); r.JSON(t)["status"] != "error" {
		t.Fatalf("in the namespace: %s", r.Body)
	}
	if d := get("127.0.0.1:4700"); d["status"] != "ready" || d["production"] != true {
		t.Fatalf("the default world after the namespace's change: %v", d)
	}
	mustStatus(t, e.post("/_emulator/reset", "", nil), 200)
	if d := get("127.0.0.1:4700"); d["production"] != false || d["status"] != "ready" {
		t.Fatalf("after a reset: %v", d)
	}
}
