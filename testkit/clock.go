package testkit

import (
	"context"
	"net/http"
	"time"
)

// Default timeouts of the WaitFor methods.
const (
	// waitManual is emulated time, which costs nothing on a manual clock: it covers the
	// slowest built-in lifecycle (slow-dns: 7 minutes) with room to spare.
	waitManual = time.Hour
	// waitReal is real time on a real clock: the default lifecycles take seconds.
	waitReal = 30 * time.Second
	// awaitGrace is how much longer than an await's own timeout its HTTP call may take.
	awaitGrace = 10 * time.Second
	// defaultWait asks await for the clock's default timeout.
	defaultWait time.Duration = -1
)

type clockView struct {
	Now  time.Time `json:"now"`
	Mode ClockMode `json:"mode"`
}

func (e *Emulator) clock() clockView {
	e.tb.Helper()
	var c clockView
	e.call(http.MethodGet, "/_emulator/clock", nil, &c)
	return c
}

// Now is the emulated time.
func (e *Emulator) Now() time.Time {
	e.tb.Helper()
	return e.clock().Now
}

// Advance moves a manual clock forward by d and returns the new time; every transition
// due by then has happened, in time order, when it returns. On a real clock it fails
// the test.
func (e *Emulator) Advance(d time.Duration) time.Time {
	e.tb.Helper()
	var c clockView
	e.call(http.MethodPost, "/_emulator/clock/advance", map[string]string{"by": d.String()}, &c)
	return c.Now
}

// WaitForDeployment waits until deployment id has status (queued, building, ready or
// error), and fails the test if it does not within an hour of emulated time on a
// manual clock, or 30 s on a real one. On a manual clock it advances the clock from due
// transition to due transition and stops at the first instant the status holds.
func (e *Emulator) WaitForDeployment(id, status string) {
	e.tb.Helper()
	e.await(map[string]any{"deployment": id, "status": status}, defaultWait)
}

// WaitForDeploymentWithin is WaitForDeployment with a timeout of emulated time (0:
// the status must hold now).
func (e *Emulator) WaitForDeploymentWithin(id, status string, timeout time.Duration) {
	e.tb.Helper()
	e.await(map[string]any{"deployment": id, "status": status}, timeout)
}

// WaitForDomain waits until the domain hostname has status (pending, verifying, active
// or error), with the timeouts and clock moves of WaitForDeployment.
func (e *Emulator) WaitForDomain(hostname, status string) {
	e.tb.Helper()
	e.await(map[string]any{"domain": hostname, "status": status}, defaultWait)
}

// WaitForDomainWithin is WaitForDomain with a timeout of emulated time.
func (e *Emulator) WaitForDomainWithin(hostname, status string, timeout time.Duration) {
	e.tb.Helper()
	e.await(map[string]any{"domain": hostname, "status": status}, timeout)
}

// WaitForRequests waits until the journal holds at least n requests that filter
// selects, as when the code under test calls the emulator from another goroutine, and
// fails the test if it does not within 30 s. It waits in real time whatever the clock:
// requests come from clients, not from the passing of emulated time.
func (e *Emulator) WaitForRequests(filter RequestFilter, n int) {
	e.tb.Helper()
	e.WaitForRequestsWithin(filter, n, waitReal)
}

// WaitForRequestsWithin is WaitForRequests with a timeout (real time).
func (e *Emulator) WaitForRequestsWithin(filter RequestFilter, n int, timeout time.Duration) {
	e.tb.Helper()
	body := map[string]any{
		"requests": filter.match(),
		"count":    n, "timeout": timeout.String(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+awaitGrace)
	defer cancel()
	e.callCtx(ctx, http.MethodPost, "/_emulator/await", body, nil)
}

// await calls POST /_emulator/await with body and timeout (or the clock's default).
// On a real clock the server waits, so the call may take as long as the timeout.
func (e *Emulator) await(body map[string]any, timeout time.Duration) {
	e.tb.Helper()
	ctx := context.Background()
	if c := e.clock(); !c.Mode.Stands() { // real or scaled: the server waits, in wall time
		if timeout == defaultWait {
			timeout = waitReal
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+awaitGrace)
		defer cancel()
	} else if timeout == defaultWait {
		timeout = waitManual
	}
	body["timeout"] = timeout.String()
	e.callCtx(ctx, http.MethodPost, "/_emulator/await", body, nil)
}
