// Package testkit runs hostemu for Go tests.
//
// Start gives a test its own emulator, in process on a free loopback port, gone when
// the test ends; it is cheap enough to start one per test and run the tests in
// parallel. Connect drives an emulator that is already running, such as a CI service
// container, through its control API only. Both return an *Emulator with the same
// methods: base URLs, tokens, clock, awaits, faults, the request journal, forced
// statuses, scenarios and reset.
//
// Start's clock is manual by default (see WithClock): emulated time moves only when the
// test says so, with Advance or one of the WaitFor methods, which advance it from one
// due transition to the next. A build that takes six emulated seconds then takes
// microseconds, and the timestamps a test reads are the same on every run.
//
// The embedded fixtures hold the well-known hosting tokens hostemu-read, hostemu-deploy
// and hostemu-admin, the decryption API key hostemu-cipher, and a project prj_demo.
//
// The methods of an Emulator take no testing.TB: they report failures, with the
// emulator's error code and message, to the test given to Start or Connect, and stop
// it. A parallel subtest that shares an Emulator with its parent uses With(t) so that
// failures stop the subtest rather than its parent.
package testkit

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

const (
	// shutdownTimeout bounds how long Start's cleanup lets in-flight requests finish.
	shutdownTimeout = 5 * time.Second
	// healthTimeout is how long Connect waits for a starting emulator to answer.
	healthTimeout = 5 * time.Second
	// clientTimeout bounds each request of Client, and each control call but awaits.
	clientTimeout = 30 * time.Second
)

// Emulator is one running hostemu, started by Start or reached by Connect. It is safe
// for concurrent use.
type Emulator struct {
	tb testing.TB
	r  *remote // shared by every view made by With
}

// remote is what the views of one emulator share: where it is and how to reach it.
type remote struct {
	url, cipherURL string
	tlsURL         string // the HTTPS listener of Start; "" for Connect or WithoutTLS
	controlToken   string
	srv            *emulator.Server // nil for Connect
	transport      *http.Transport
	client         *http.Client // for users: bounded by clientTimeout
	control        *http.Client // for control calls: bounded per call by a context
	log            *slog.Logger
	// namespace is the id of the namespace Connect created ("" for the default one):
	// control calls go under /_emulator/namespaces/{namespace}.
	namespace string
	tokens    Tokens
	cipherKey string

	caOnce sync.Once // fetches caPool
	caPool *x509.CertPool
	caErr  error
}

// Tokens are the hosting tokens of an emulator's world, one per scope.
type Tokens struct {
	Read   string `json:"read"`
	Deploy string `json:"deploy"`
	Admin  string `json:"admin"`
}

// wellKnown are the embedded fixtures' credentials, those of the default namespace.
var wellKnown = Tokens{Read: "hostemu-read", Deploy: "hostemu-deploy", Admin: "hostemu-admin"}

func newRemote(url, cipherURL string, cfg *config) *remote {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	log := cfg.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &remote{
		url: url, cipherURL: cipherURL, controlToken: cfg.controlToken, transport: tr, log: log,
		client:  &http.Client{Transport: tr, Timeout: clientTimeout},
		control: &http.Client{Transport: tr},
		tokens:  wellKnown, cipherKey: "hostemu-cipher",
	}
}

// Start starts an emulator in this process for tb, listening on 127.0.0.1 on a free
// port (the decryption service on the same listener) and, unless WithoutTLS, serving
// HTTPS on another (TLSURL), and shuts it down when tb's test
// ends. Unless options say otherwise it serves the embedded fixtures and the default
// scenario, with seed 1 and a manual clock starting at 2026-01-01T00:00:00Z, so that a
// test sees the same world, ids and times on every run.
func Start(tb testing.TB, opts ...Option) *Emulator {
	tb.Helper()
	cfg := newConfig(opts)
	if bad := cfg.given("WithCipherURL"); bad != "" {
		tb.Fatalf("testkit.Start: %s applies only to Connect", bad)
	}
	o := emulator.Options{
		Addr: "127.0.0.1:0", Scenario: cfg.scenario, ScenariosDir: cfg.scenariosDir,
		Fixtures: cfg.fixtures, Seed: cfg.seed, ClockMode: cfg.clockMode, ClockStart: cfg.clockStart,
		ControlToken: cfg.controlToken, Logger: cfg.logger, Version: "testkit", ScenarioYAML: cfg.scenarioYAML,
	}
	if !cfg.noTLS {
		o.TLSAddr = "127.0.0.1:0"
	}
	if o.ClockMode == "" {
		o.ClockMode = ClockManual
	}
	if o.ClockStart.IsZero() && o.ClockMode.Stands() {
		o.ClockStart = defaultClockStart
	}
	srv, err := emulator.Listen(o)
	if err != nil {
		tb.Fatalf("testkit.Start: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	r := newRemote(srv.URL(), srv.CipherURL(), cfg)
	r.srv, r.tlsURL = srv, srv.TLSURL()
	r.tokens, r.cipherKey = worldCredentials(srv.Emulator())
	tb.Cleanup(func() {
		r.saveOnFailure(tb)
		r.collect(tb)
		r.transport.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Logf("testkit: emulator shutdown: %v", err)
		}
		if err := <-served; err != nil {
			tb.Errorf("testkit: emulator serving failed: %v", err)
		}
	})
	r.joinMutation(tb)
	return &Emulator{tb: tb, r: r}
}

// Connect drives the emulator running at url, the hosting service's base URL (e.g.
// http://hostemu:4700, without /v1), through its control API. It waits a few seconds
// for /_emulator/health to answer, for a service container that is still starting, and
// stops the test if it does not.
//
// Connect creates a namespace for the test, a world of its own that no other test sees,
// and deletes it when the test ends: tests may run in parallel against one container.
// Use the Emulator's tokens (ReadToken, DeployToken, AdminToken, CipherKey): they are
// what finds the namespace, so the code under test needs no change. The namespace has a
// manual clock at 2026-01-01T00:00:00Z, as Start has, unless WithClock or
// WithClockStart say otherwise; WithSeed, WithScenario and WithFixtures (one file) shape
// it too. With Shared, Connect drives the default namespace instead, with the
// well-known tokens, and does not reset it: call Reset for a clean world.
//
// WithControlToken is the running emulator's control token, WithCipherURL its
// decryption service's address when it has its own. WithScenariosDir and
// WithScenarioYAML describe how a server starts, which only Start can choose: giving
// one fails the test, as do world options with Shared.
func Connect(tb testing.TB, url string, opts ...Option) *Emulator {
	tb.Helper()
	cfg := newConfig(opts)
	if bad := cfg.given("WithScenariosDir", "WithoutTLS"); bad != "" {
		tb.Fatalf("testkit.Connect: %s applies only to Start: the running emulator was configured when it started", bad)
	}
	if bad := cfg.given("WithFixtures", "WithSeed", "WithClock", "WithClockStart", "WithScenarioYAML"); bad != "" && cfg.shared {
		tb.Fatalf("testkit.Connect: %s does not apply with Shared: the default namespace was configured when the emulator started", bad)
	}
	url = strings.TrimSuffix(strings.TrimRight(url, "/"), "/v1")
	cipherURL := cfg.cipherURL
	if cipherURL == "" {
		cipherURL = url
	}
	r := newRemote(url, cipherURL, cfg)
	tb.Cleanup(r.transport.CloseIdleConnections)
	e := &Emulator{tb: tb, r: r}
	if err := r.waitHealthy(healthTimeout); err != nil {
		tb.Fatalf("testkit.Connect: no hostemu answers at %s/_emulator/health within %s: %v "+
			"(is it running, and is the URL the hosting service's base URL?)", url, healthTimeout, err)
	}
	if !cfg.shared {
		if err := r.createNamespace(cfg); err != nil {
			tb.Fatalf("testkit.Connect: creating a namespace at %s: %v", url, err)
		}
		tb.Cleanup(func() {
			r.saveOnFailure(tb)
			r.collect(tb)
			if err := r.deleteNamespace(); err != nil {
				tb.Logf("testkit: deleting namespace %s: %v", r.namespace, err)
			}
		})
		r.joinMutation(tb)
		return e
	}
	// A control call now, so that a wrong or missing control token fails here, clearly.
	if err := r.do(context.Background(), http.MethodGet, "/_emulator/clock", nil, nil); err != nil {
		tb.Fatalf("testkit.Connect: the control API of %s refuses us: %v", url, err)
	}
	tb.Cleanup(func() { r.saveOnFailure(tb) })
	if cfg.set["WithScenario"] {
		e.UseScenario(cfg.scenario)
	}
	return e
}

// waitHealthy polls GET /_emulator/health until it answers 200 {"status":"ok"}. It
// polls because a service container may still be starting; there is nothing to wait on.
func (r *remote) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := r.health(deadline)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-tick.C
	}
}

func (r *remote) health(deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/_emulator/health", nil)
	if err != nil {
		return err
	}
	resp, err := r.control.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusOK || h.Status != "ok" {
		return fmt.Errorf("GET /_emulator/health answered %s, not 200 {\"status\":\"ok\"}", resp.Status)
	}
	return nil
}

// With returns a view of the same emulator that reports failures to tb: use it in a
// subtest that shares its parent's Emulator, since a failure must stop the test that
// made the call.
func (e *Emulator) With(tb testing.TB) *Emulator { return &Emulator{tb: tb, r: e.r} }

// URL is the hosting service's base URL, e.g. http://127.0.0.1:41234 (paths start with
// /v1; the control API is under /_emulator).
func (e *Emulator) URL() string { return e.r.url }

// CipherURL is the decryption service's base URL (URL unless it has its own address).
func (e *Emulator) CipherURL() string { return e.r.cipherURL }

// Client is an HTTP client for the emulator, with a 30 s timeout per request so that a
// hung request fails the test instead of hanging it. Its idle connections are closed
// when the test ends.
func (e *Emulator) Client() *http.Client { return e.r.client }

// Server is the in-process server of Start, for reaching past HTTP (its Emulator's
// World); nil for Connect.
func (e *Emulator) Server() *emulator.Server { return e.r.srv }

// Namespace is the id of the namespace Connect created for the test ("ns_…"), or ""
// for Start and Shared (the default namespace).
func (e *Emulator) Namespace() string { return e.r.namespace }

// Tokens are the hosting tokens of the emulator's world: the namespace's with Connect,
// else the fixtures' (the well-known hostemu-read, hostemu-deploy and hostemu-admin with
// the embedded ones).
func (e *Emulator) Tokens() Tokens { return e.r.tokens }

// ReadToken is a hosting token of scope read in the emulator's world.
func (e *Emulator) ReadToken() string { return e.r.tokens.Read }

// DeployToken is a hosting token of scope deploy in the emulator's world.
func (e *Emulator) DeployToken() string { return e.r.tokens.Deploy }

// AdminToken is a hosting token of scope admin in the emulator's world.
func (e *Emulator) AdminToken() string { return e.r.tokens.Admin }

// CipherKey is a decryption API key of the emulator's world.
func (e *Emulator) CipherKey() string { return e.r.cipherKey }

// worldCredentials are the first hosting token of each scope and the first decryption
// key of an in-process emulator's fixtures, as its banner shows them.
func worldCredentials(e *emulator.Emulator) (Tokens, string) {
	c := e.Credentials()
	return Tokens{Read: c.Read, Deploy: c.Deploy, Admin: c.Admin}, c.CipherKey
}
