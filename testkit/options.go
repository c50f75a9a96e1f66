package testkit

import (
	"log/slog"
	"strings"
	"time"
)

// defaultClockStart is where Start's manual clock begins unless WithClockStart says
// otherwise: a fixed instant makes the fixtures' generated timestamps, and every time a
// test reads, the same on every run.
var defaultClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Option configures Start or Connect.
type Option func(*config)

// config is what the options say. set records which options were given, so that
// Connect can refuse the ones that describe a world it cannot make.
type config struct {
	scenario     string
	scenariosDir string
	fixtures     string
	seed         int64
	clockMode    ClockMode
	clockStart   time.Time
	controlToken string
	cipherURL    string
	logger       *slog.Logger
	noTLS        bool
	scenarioYAML []string
	shared       bool
	set          map[string]bool
}

func newConfig(opts []Option) *config {
	c := &config{set: map[string]bool{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// given lists the options of names that were given, for an error message.
func (c *config) given(names ...string) string {
	var out []string
	for _, n := range names {
		if c.set[n] {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// WithScenario makes the named scenario active (built in, e.g. "failing-builds",
// "instant", "slow-dns", one from WithScenariosDir, or one given by WithScenarioYAML).
// With Start, and with Connect (the test's namespace is created with it), it is the
// start-up scenario that Reset returns to. With Connect and Shared it is switched to at
// connect, and Reset returns to the running emulator's own start-up scenario.
func WithScenario(name string) Option {
	return func(c *config) { c.scenario, c.set["WithScenario"] = name, true }
}

// WithScenariosDir adds scenarios from the YAML files of dir to the built-in ones, and
// watches it (Start only).
func WithScenariosDir(dir string) Option {
	return func(c *config) { c.scenariosDir, c.set["WithScenariosDir"] = dir, true }
}

// WithFixtures replaces the embedded fixtures with a fixture file (or, with Start, a
// directory); Connect sends the file's document with the namespace it creates. The well-known tokens hostemu-read, hostemu-deploy and hostemu-admin exist only
// if the fixtures define them; Token works with any fixtures.
func WithFixtures(path string) Option {
	return func(c *config) { c.fixtures, c.set["WithFixtures"] = path, true }
}

// WithSeed seeds the world's random choices: generated fixtures, ids, fault
// probabilities (1 by default; with Connect, the running emulator's).
func WithSeed(n int64) Option {
	return func(c *config) { c.seed, c.set["WithSeed"] = n, true }
}

// WithClock sets the clock mode (with Connect, of the test's namespace). Start's default is ClockManual, unlike
// the hostemu command's: time moves only on Advance and the WaitFor methods, so
// lifecycles take no real time and every timestamp a test sees is the same on every
// run. With ClockReal and no WithClockStart, the clock starts at the real time.
func WithClock(mode ClockMode) Option {
	return func(c *config) { c.clockMode, c.set["WithClock"] = mode, true }
}

// WithClockStart sets the emulated time at start (2026-01-01T00:00:00Z by default on
// a manual clock; with Connect, of the test's namespace).
func WithClockStart(t time.Time) Option {
	return func(c *config) { c.clockStart, c.set["WithClockStart"] = t, true }
}

// WithControlToken guards the control API. With Start it sets the emulator's control
// token (and the Emulator sends it); with Connect it is the token to send, the one the
// running emulator was started with (--control-token).
func WithControlToken(tok string) Option {
	return func(c *config) { c.controlToken, c.set["WithControlToken"] = tok, true }
}

// WithCipherURL is the decryption service's base URL of a running emulator started
// with its own --cipher-addr (Connect only; by default the URL given to Connect).
func WithCipherURL(url string) Option {
	return func(c *config) { c.cipherURL, c.set["WithCipherURL"] = strings.TrimRight(url, "/"), true }
}

// WithLogger receives the logs: the emulator's own with Start, and with both, one
// debug line per control API call the Emulator makes.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger, c.set["WithLogger"] = l, true }
}

// WithoutTLS starts the emulator without its HTTPS listener (Start only): EdgeClient then
// reaches https URLs through the plain listener as a proxy (CONNECT), as with Connect.
func WithoutTLS() Option {
	return func(c *config) { c.noTLS, c.set["WithoutTLS"] = true, true }
}

// WithScenarioYAML adds a scenario given as a YAML document, with no file or directory
// to write (may be given more than once). With Start the emulator knows it; with
// Connect the test's namespace does (it is sent at creation; not with Shared, whose
// scenarios are the running emulator's). Make it active with WithScenario or
// UseScenario.
func WithScenarioYAML(doc string) Option {
	return func(c *config) { c.scenarioYAML, c.set["WithScenarioYAML"] = append(c.scenarioYAML, doc), true }
}

// Shared makes Connect drive the running emulator's default namespace, as every test
// of one process then shares it, instead of creating a namespace of its own for the
// test. Its world is then whatever the emulator started with, and Reset is everyone's.
func Shared() Option {
	return func(c *config) { c.shared, c.set["Shared"] = true, true }
}
