package emulator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/httpapi"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/persist"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/tlsca"
	"github.com/hostemu/hostemu/emulator/internal/transport"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// ConfigError reports options that name something wrong: fixtures that do not load, a
// scenario that does not exist, a state file that is not one. The command line exits 2
// on it, as for a bad flag.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Emulator is one emulated world and its HTTP handlers.
type Emulator struct {
	opts  Options
	log   *slog.Logger
	world *world.World
	api   *httpapi.API
	ns    *namespace.Registry
	// files bounds the uploaded contents of every world together (--file-store-size)
	files  *edge.Budget
	reg    *scenario.Registry
	worlds *namespace.Worlds // builds the default world and each namespace's

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	saver     *persist.Persister
	ca        *tlsca.CA
	tunnels   *http.Server // serves CONNECT tunnels
}

// New builds an emulator from opts: scenarios (built in, plus a watched directory),
// fixtures (embedded, or from files), the world, and its handlers.
func New(opts Options) (*Emulator, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ClockMode != "" { // the command line parses it; a Go caller's is checked here
		m, err := clock.ParseMode(string(opts.ClockMode))
		if err != nil {
			return nil, &ConfigError{err}
		}
		opts.ClockMode = m // canonical: a bundle of this world names a mode replay reads
	}
	if opts.AutoIdle != 0 && (opts.AutoIdle < time.Millisecond || opts.AutoIdle > 10*time.Second) {
		return nil, &ConfigError{fmt.Errorf("auto idle %s: want a duration from 1ms to 10s", opts.AutoIdle)}
	}
	start := opts.ClockStart
	if start.IsZero() {
		start = time.Now().UTC().Truncate(time.Second)
	}
	if !state.InRange(start) {
		return nil, &ConfigError{fmt.Errorf("clock start %s is outside the years %d to %d", start.Format(time.RFC3339), state.MinYear, state.LastYear)}
	}
	// the CA is read (or made) on the other core while the fixtures and the world are
	// built: the two share nothing, and a start waits for the later of them
	cas := make(chan caResult, 1)
	go func() {
		ca, err := newCA(opts.CADir, opts.CADirFallback, opts.Logger)
		cas <- caResult{ca, err}
	}()
	files, err := namespace.Fixtures(opts.Fixtures)
	if err != nil {
		<-cas
		return nil, &ConfigError{err}
	}
	reg, err := scenario.NewRegistry()
	if err != nil {
		<-cas
		return nil, err
	}
	for i, doc := range opts.ScenarioYAML {
		if ps := reg.AddInline(fmt.Sprintf("scenario #%d", i+1), []byte(doc)); len(ps) > 0 {
			<-cas
			return nil, &ConfigError{fmt.Errorf("scenarios:\n%w", problem.List(ps))}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Emulator{opts: opts, log: opts.Logger, cancel: cancel, files: edge.NewBudget(opts.FileStoreSize)}
	if opts.ScenariosDir != "" {
		for _, p := range reg.LoadDir(opts.ScenariosDir) {
			e.log.Warn("scenario problem", "problem", p.String())
		}
	}
	clockStart := start
	if opts.ClockStart.IsZero() && !opts.ClockMode.Stands() {
		clockStart = time.Time{} // a real or scaled clock with no start is the wall clock, sub-second part included
	}
	e.reg = reg
	e.worlds = &namespace.Worlds{
		Base: world.Config{
			Seed: opts.Seed, ClockMode: opts.ClockMode, ClockStart: clockStart, AutoIdle: opts.AutoIdle,
			Scenarios: reg, Scenario: opts.Scenario, JournalSize: opts.JournalSize, MaxFaults: opts.MaxFaults,
			RateLimitsOff: opts.RateLimitsOff, Logger: opts.Logger,
			EdgeDomain: opts.EdgeDomain, URLForm: opts.edgeURLForm(), FileStoreSize: opts.FileStoreSize, FileBudget: e.files,
		},
		Files: files, Start: start, MaxBytes: opts.MaxWorldBytes,
	}
	e.world, err = e.worlds.Default()
	ca := <-cas
	if err != nil {
		cancel()
		var broken *scenario.BuiltinError
		if errors.As(err, &broken) {
			// --scenario naming a built-in that does not parse: a bug in hostemu, not a
			// bad option (the command exits 1, as for a broken default.yaml)
			return nil, err
		}
		return nil, &ConfigError{err}
	}
	// before the state file: an open persister has written the snapshot and holds the
	// log open, which a later error would leave behind
	if e.ca, err = ca.ca, ca.err; err != nil {
		cancel()
		return nil, err
	}
	if opts.StateFile != "" {
		if e.saver, err = persist.Open(opts.StateFile, e.world, e.log, opts.compactMin); err != nil {
			cancel()
			return nil, &ConfigError{err}
		}
	}
	lim := opts.Limits.withDefaults()
	e.ns = namespace.New(namespace.Config{TTL: opts.NamespaceTTL, Max: opts.MaxNamespaces, Now: opts.namespaceClock, Build: e.worlds.Namespace,
		MaxBytes: opts.MaxWorldBytes})
	e.worlds.Grow = e.ns.Grow
	e.api = httpapi.New(e.world, httpapi.Config{
		PublicURL: opts.PublicURL, CORSOrigins: opts.CORSOrigins, TrustedProxies: opts.TrustedProxies,
		ControlToken: opts.ControlToken, ControlOrigins: opts.ControlOrigins, CheckHost: opts.LoopbackOnly(),
		Version: opts.Version, Seed: opts.Seed, Logger: opts.Logger, CipherSeparate: opts.CipherAddr != "", ControlSeparate: opts.ControlAddr != "",
		Limits: lim.httpLimits(), CA: e.ca, ServeTunnel: e.serveTunnel, TunnelTimeout: lim.ReadHeaderTimeout, Namespaces: e.ns,
		ProxyDomains: opts.ProxyDomains, TLSURL: opts.tlsURL, URLForm: opts.edgeURLForm(), ImportWait: opts.importWait,
	})
	e.tunnels = transport.TunnelServer(e.api.Handler(), lim.transport(), e.log)
	e.tunnels.ConnContext = httpapi.TunnelContext // a tunnel's requests go to its namespace
	if opts.ControlExposed() {
		e.log.Warn("the control API listens beyond loopback with no --control-token: anyone who can reach it can reset the world, mint admin tokens and read every request", "addr", opts.Addr)
	}
	reg.Subscribe(func() {
		e.world.RefreshScenario()
		e.ns.Each((*world.World).RefreshScenario)
	})
	e.wg.Add(1)
	go func() { defer e.wg.Done(); e.ns.Run(ctx) }()
	if opts.ScenariosDir != "" {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			if err := reg.Watch(ctx, opts.ScenariosDir, e.log); err != nil {
				e.log.Error("watching scenarios stopped", "dir", opts.ScenariosDir, "err", err)
			}
		}()
	}
	if e.saver != nil {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); e.saver.Run(ctx) }()
	}
	e.world.Start()
	return e, nil
}

// Now is the default world's emulated time.
func (e *Emulator) Now() time.Time { return e.world.Now() }

// Credentials are the default world's first hosting token of each scope and its first
// decryption API key, as the banner shows them; a field is "" when there is none.
type Credentials struct {
	Read, Deploy, Admin string
	CipherKey           string
}

// Credentials returns the default world's credentials (see Credentials).
func (e *Emulator) Credentials() Credentials {
	var c Credentials
	for _, t := range e.world.Tokens() {
		var dst *string
		switch t.Scope {
		case state.ScopeRead:
			dst = &c.Read
		case state.ScopeDeploy:
			dst = &c.Deploy
		case state.ScopeAdmin:
			dst = &c.Admin
		}
		if dst != nil && *dst == "" {
			*dst = t.Token
		}
	}
	if keys := e.world.CipherAPIKeys(); len(keys) > 0 {
		c.CipherKey = keys[0]
	}
	return c
}

// Handler serves the hosting service, the control API and the docs (and the
// decryption service unless Options.CipherAddr gives it its own listener).
func (e *Emulator) Handler() http.Handler { return e.api.Handler() }

// CipherHandler serves the decryption service alone.
func (e *Emulator) CipherHandler() http.Handler { return e.api.CipherHandler() }

// ControlHandler serves the control API (and health and the docs) alone, for
// Options.ControlAddr's listener.
func (e *Emulator) ControlHandler() http.Handler { return e.api.ControlHandler() }

// Banner is the start-up text for services at url (hosting, edge, and control) and
// cipherURL: where each listens and the credentials. Server.Banner also names the
// addresses it really listens on.
func (e *Emulator) Banner(url, cipherURL string) string { return e.banner(url, cipherURL, url, nil) }

func (e *Emulator) banner(url, cipherURL, controlURL string, listeners []string) string {
	w := e.world
	var b strings.Builder
	fmt.Fprintf(&b, "hostemu %s · scenario %s · clock %s (%s)\n", e.opts.Version, w.Scenario().Name, w.ClockMode(), w.Now().Format(time.RFC3339))
	for _, l := range listeners {
		if !loopbackAddr(l) {
			fmt.Fprintf(&b, "  listening on     %s (beyond loopback; from this machine use the URLs below)\n", l)
		}
	}
	fmt.Fprintf(&b, "  hosting API      %s/v1\n", url)
	fmt.Fprintf(&b, "  decryption API   %s/v1  (POST /v1/encrypt, POST /v1/decrypt)\n", cipherURL)
	form := w.URLForm()
	if form == (state.URLForm{}) { // no listener of its own: the edge is on url
		form = state.URLForm{Scheme: "http", Port: urlPort(url)}
	}
	fmt.Fprintf(&b, "  edge             %s/  (deployment URLs and custom domains)\n", form.URL("<project>-<suffix>."+w.EdgeDomain()))
	fmt.Fprintf(&b, "  control API      %s/_emulator\n", controlURL)
	fmt.Fprintf(&b, "  dashboard        %s/dashboard\n", controlURL)
	fmt.Fprintf(&b, "  docs             %s/docs/errors\n", url)
	if e.opts.ControlExposed() {
		fmt.Fprintf(&b, "  WARNING          the control API listens beyond loopback (%s) with no --control-token:\n", e.opts.controlAddr())
		fmt.Fprintf(&b, "                   anyone who reaches it can reset the world and read every token; set --control-token\n")
	}
	tokens, cipherKeys := w.Tokens(), w.CipherAPIKeys()
	seen := map[state.Scope]bool{}
	for _, t := range tokens {
		if !seen[t.Scope] {
			seen[t.Scope] = true
			fmt.Fprintf(&b, "  %-16s %s\n", "token ("+string(t.Scope)+")", t.Token)
		}
	}
	if len(cipherKeys) > 0 {
		fmt.Fprintf(&b, "  %-16s %s\n", "cipher API key", cipherKeys[0])
	}
	if len(tokens) > 0 {
		fmt.Fprintf(&b, "  try: curl -H 'Authorization: Bearer %s' %s/v1/projects\n", tokens[0].Token, url)
	}
	return b.String()
}

// Release lets go of requests held by delay and timeout faults, so that a shutdown
// does not wait for them: delayed requests are answered at once, timed-out ones dropped.
func (e *Emulator) Release() { e.api.Release() }

// Close stops the world's clock and watchers and saves state when configured.
func (e *Emulator) Close() error {
	e.closeOnce.Do(func() {
		e.cancel()
		e.tunnels.Close()
		e.wg.Wait()
		e.ns.Close()
		e.world.Close()
		if e.saver != nil {
			e.closeErr = e.saver.Close()
		}
	})
	return e.closeErr
}

// urlPort is the port of a URL such as http://127.0.0.1:4700 (80 when it names none).
func urlPort(url string) int {
	if i := strings.LastIndexByte(url, ':'); i >= 0 && !strings.Contains(url[i:], "/") {
		n, _ := strconv.Atoi(url[i+1:])
		return n
	}
	return 80
}

// caResult is the CA newCA read or made, or why it could not.
type caResult struct {
	ca  *tlsca.CA
	err error
}
