// Package emulator wires one emulated world (state, clock and scheduler, scenarios,
// rate limits, faults, journal) to its HTTP handlers and listeners.
package emulator

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// Options configure an emulator. The zero value works: embedded fixtures and default
// scenario, a real clock starting now, rate limits on, CORS open, journal of 1,000.
type Options struct {
	// Addr is where Listen binds the hosting service and control API ("127.0.0.1:0"
	// when empty, so tests get a free port).
	Addr string
	// CipherAddr, when set, gives the decryption service its own listener.
	CipherAddr string
	// PublicURL, when set, is the base of links to hostemu (doc_url, build_logs_url).
	PublicURL string
	// ScenariosDir adds and overrides scenarios from YAML files, watched for changes.
	ScenariosDir string
	// Scenario is the active scenario's name ("default" when empty).
	Scenario string
	// Fixtures is a fixture file or directory replacing the embedded default.
	Fixtures string
	// Seed seeds every random choice of the world (1 when zero).
	Seed int64
	// ClockMode is real (default) or manual.
	ClockMode clock.Mode
	// ClockStart is the emulated time at start. Zero: a manual clock starts at the real
	// time to the second; a real clock is the wall clock itself. A real clock given a
	// start keeps the offset start minus the wall time at start.
	ClockStart time.Time
	// RateLimitsOff sends the headers but refuses nothing.
	RateLimitsOff bool
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// CORSOrigins are the allowed origins (["*"] when empty).
	CORSOrigins []string
	// ControlToken, when set, guards the control API (all but health).
	ControlToken string
	// JournalSize bounds the request journal (1,000 when zero).
	JournalSize int
	// StateFile, when set, is loaded at start if present and saved on Close and
	// every few seconds while the state changes.
	StateFile string
	// Logger receives the emulator's logs (discarded when nil).
	Logger *slog.Logger
	// Version is reported by health and the banner.
	Version string
}
