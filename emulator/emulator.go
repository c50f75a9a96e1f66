package emulator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/httpapi"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/tlsca"
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
	files *edge.Budget
	// what a namespace's world is built from, unless its creation says otherwise
	reg        *scenario.Registry
	fixtures   []*fixture.File
	start      time.Time // the fixtures' start
	clockStart time.Time // zero: a real clock is the wall clock

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	saver     *persister
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
	start := opts.ClockStart
	if start.IsZero() {
		start = time.Now().UTC().Truncate(time.Second)
	}
	if !state.InRange(start) {
		return nil, &ConfigError{fmt.Errorf("clock start %s is outside the years %d to %d", start.Format(time.RFC3339), state.MinYear, state.MaxYear)}
	}
	reg, err := scenario.NewRegistry()
	if err != nil {
		return nil, err
	}
	for i, doc := range opts.ScenarioYAML {
		if ps := reg.AddInline(fmt.Sprintf("scenario #%d", i+1), []byte(doc)); len(ps) > 0 {
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
	files, err := parseFixtures(opts)
	if err != nil {
		cancel()
		return nil, &ConfigError{err}
	}
	fixtures := fixtureBuilder(files, opts.Seed, start, opts.EdgeDomain, opts.edgeURLForm(), nil)
	clockStart := start
	if opts.ClockStart.IsZero() && opts.ClockMode != ClockManual {
		clockStart = time.Time{} // a real clock with no start is the wall clock, sub-second part included
	}
	e.reg, e.fixtures, e.start, e.clockStart = reg, files, start, clockStart
	e.world, err = world.New(world.Config{
		Seed: opts.Seed, ClockMode: opts.ClockMode, ClockStart: clockStart, Fixtures: fixtures,
		Scenarios: reg, Scenario: opts.Scenario, JournalSize: opts.JournalSize,
		RateLimitsOff: opts.RateLimitsOff, Logger: opts.Logger,
		EdgeDomain: opts.EdgeDomain, URLForm: opts.edgeURLForm(), FileStoreSize: opts.FileStoreSize, FileBudget: e.files,
		Grow: defaultWorldGrowth(opts.MaxWorldBytes),
	})
	if err != nil {
		cancel()
		return nil, &ConfigError{err}
	}
	// before the state file: an open persister has written the snapshot and holds the
	// log open, which a later error would leave behind
	if e.ca, err = newCA(opts.CADir); err != nil {
		cancel()
		return nil, err
	}
	if opts.StateFile != "" {
		if e.saver, err = openPersister(opts.StateFile, e.world, e.log); err != nil {
			cancel()
			return nil, &ConfigError{err}
		}
	}
	lim := opts.Limits.withDefaults()
	e.ns = namespace.New(namespace.Config{TTL: opts.NamespaceTTL, Max: opts.MaxNamespaces, Now: opts.namespaceClock, Build: e.buildNamespace,
		MaxBytes: opts.MaxWorldBytes})
	e.api = httpapi.New(e.world, httpapi.Config{
		PublicURL: opts.PublicURL, CORSOrigins: opts.CORSOrigins, TrustedProxies: opts.TrustedProxies,
		ControlToken: opts.ControlToken, ControlOrigins: opts.ControlOrigins, CheckHost: opts.LoopbackOnly(),
		Version: opts.Version, Seed: opts.Seed, Logger: opts.Logger, CipherSeparate: opts.CipherAddr != "", ControlSeparate: opts.ControlAddr != "",
		Limits: lim.httpLimits(), CA: e.ca, ServeTunnel: e.serveTunnel, TunnelTimeout: lim.ReadHeaderTimeout, Namespaces: e.ns,
		ProxyDomains: opts.ProxyDomains, TLSURL: opts.tlsURL, URLForm: opts.edgeURLForm(),
	})
	e.tunnels = newTunnelServer(e.api.Handler(), lim, e.log)
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
		go func() { defer e.wg.Done(); e.saver.run(ctx) }()
	}
	e.world.Start()
	return e, nil
}

// parseFixtures parses the fixtures once: every world is built from the parsed form.
// defaultWorldGrowth holds the default world, on its own, to max bytes
// (namespace.DefaultMaxBytes when 0) as it grows through the API; what its fixtures or an
// import bring is bounded by --fixtures and --max-state-bytes.
func defaultWorldGrowth(max int64) func(*world.World, int64) error {
	if max <= 0 {
		max = namespace.DefaultMaxBytes
	}
	return func(w *world.World, delta int64) error {
		if used := w.Weight(); used+delta > max {
			return apperr.Errorf(apperr.StorageFull, "the world holds about %d bytes of the %d --max-world-bytes allows; %d more do not fit: reset it, or import a smaller state", used, max, delta)
		}
		return nil
	}
}

func parseFixtures(opts Options) ([]*fixture.File, error) {
	var files []*fixture.File
	var problems []fixture.Problem
	if opts.Fixtures == "" {
		files, problems = fixture.Embedded()
	} else {
		files, problems = fixture.ParsePath(opts.Fixtures)
	}
	return files, problemsError(problems)
}

// fixtureBuilder returns what builds the start-up state from parsed fixtures, at start
// and on every reset. A namespace's id replaces the fixtures' credentials with its own.
func fixtureBuilder(files []*fixture.File, seed int64, start time.Time, edgeDomain string, form state.URLForm, id *namespace.Identity) func() (state.Snapshot, error) {
	fo := fixture.Options{Seed: seed, Start: start, EdgeDomain: edgeDomain, URLForm: form}
	return func() (state.Snapshot, error) {
		snap, problems := fixture.Build(files, fo)
		if id != nil {
			snap.Tokens = []state.Token{
				{Token: id.Tokens.Read, Scope: state.ScopeRead},
				{Token: id.Tokens.Deploy, Scope: state.ScopeDeploy},
				{Token: id.Tokens.Admin, Scope: state.ScopeAdmin},
			}
			snap.Cipher.APIKeys = []string{id.CipherKey}
		}
		return snap, problemsError(problems)
	}
}

func problemsError(problems []fixture.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("fixtures:\n%w", problem.List(problems))
}

// World is the emulated world, for in-process tests that reach past HTTP.
func (e *Emulator) World() *world.World { return e.world }

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
		form = state.URLForm{Scheme: "http", Port: portNumber(portOf(url))}
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
			e.closeErr = e.saver.close()
		}
	})
	return e.closeErr
}

// portNumber is port as a number, 0 when it is not one.
func portNumber(port string) int {
	n, _ := strconv.Atoi(port)
	return n
}

// portOf is the port of a URL such as http://127.0.0.1:4700.
func portOf(url string) string {
	if i := strings.LastIndexByte(url, ':'); i >= 0 && !strings.Contains(url[i:], "/") {
		return url[i+1:]
	}
	return "80"
}
