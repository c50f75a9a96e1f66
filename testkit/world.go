package testkit

import (
	"net/http"
	"net/url"
)

// Token mints a fresh hosting token of scope ("read", "deploy" or "admin"), so that a
// test can revoke or rate-limit its own without touching others'. Reset forgets minted
// tokens. The embedded fixtures also hold the well-known tokens hostemu-read,
// hostemu-deploy and hostemu-admin, which a test may use as they are.
func (e *Emulator) Token(scope string) string {
	e.tb.Helper()
	var out struct {
		Token string `json:"token"`
	}
	e.call(http.MethodPost, "/_emulator/tokens", map[string]string{"scope": scope}, &out)
	return out.Token
}

// Reset returns the emulator to its start-up world: fixtures, start-up scenario, no
// faults added through the API, an empty journal, fresh rate limits, no minted tokens,
// and a manual clock back at its start.
func (e *Emulator) Reset() {
	e.tb.Helper()
	e.call(http.MethodPost, "/_emulator/reset", nil, nil)
}

// SetDeploymentStatus forces deployment id to status (queued, building, ready or
// error) now; the rest of its lifecycle is dropped.
func (e *Emulator) SetDeploymentStatus(id, status string) {
	e.tb.Helper()
	e.call(http.MethodPost, "/_emulator/deployments/"+url.PathEscape(id)+"/status", map[string]string{"status": status}, nil)
}

// SetDomainStatus forces the domain hostname to status (pending, verifying, active or
// error) now, with its certificate to match.
func (e *Emulator) SetDomainStatus(hostname, status string) {
	e.tb.Helper()
	e.call(http.MethodPost, "/_emulator/domains/"+url.PathEscape(hostname)+"/status", map[string]string{"status": status}, nil)
}

// UseScenario makes the named scenario active. Resources created from now on follow
// it; those in flight finish on the schedule they started with. Reset returns to the
// start-up scenario.
func (e *Emulator) UseScenario(name string) {
	e.tb.Helper()
	e.call(http.MethodPut, "/_emulator/scenarios/active", map[string]string{"name": name}, nil)
}
