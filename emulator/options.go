// Package emulator wires one emulated world (state, clock and scheduler, scenarios,
// rate limits, faults, journal) to its HTTP handlers and listeners.
package emulator

import (
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Options configure an emulator. The zero value works: embedded fixtures and default
// scenario, a real clock starting now, rate limits on, CORS open, journal of 1,000.
type Options struct {
	// Addr is where Listen binds the hosting service and control API ("127.0.0.1:0"
	// when empty, so tests get a free port).
	Addr string
	// AddrFallback lets Listen take a free port on Addr's host when Addr's port is in
	// use, rather than fail: hostemu replay's default does, so that a bundle opens
	// beside a hostemu that holds 4700; hostemu serve's does not (a service container's
	// clients expect its port).
	AddrFallback bool
	// CipherAddr, when set, gives the decryption service its own listener.
	CipherAddr string
	// TLSAddr, when set, is where Listen serves the hosting service, the control API
	// and the edge over HTTPS, with certificates from the local CA (see CADir).
	// Deployment URLs then carry its port (see EdgeURLPort).
	TLSAddr string
	// TLSAddrFallback lets Listen take a free port on TLSAddr's host when TLSAddr's
	// port is in use, rather than fail: the command line's default (127.0.0.1:4743)
	// does, so that a second hostemu still starts; an address the user gave does not.
	TLSAddrFallback bool
	// EdgeURLPort, when set, is the port deployment URLs carry (https) instead of the
	// HTTPS listener's: a reverse proxy's 443, say. Without it, a server that Listen
	// started writes https://<host>:<TLSAddr's port>, or, with no TLSAddr,
	// http://<host>:<Addr's port>; an emulator from New, with no listener, https://<host>.
	EdgeURLPort int
	// CADir, when set, keeps the local CA (ca.pem, and ca-key.pem with mode 0600) so
	// that every start has the same one; created if missing. Empty or CAInMemory (":memory:"): a new CA in memory.
	CADir string
	// CADirFallback keeps a new CA in memory, with a warning, when CADir cannot hold
	// one (a read-only home in a container, a broken ca.pem), rather than fail the
	// start: the command line's default directory does; a --ca-dir the user gave does
	// not.
	CADirFallback bool
	// PublicURL, when set, is the base of links to hostemu (doc_url, build_logs_url).
	PublicURL string
	// ScenariosDir adds and overrides scenarios from YAML files, watched for changes.
	ScenariosDir string
	// ScenarioYAML are scenario documents given in memory, added to the built-in ones
	// (and overriding a built-in of the same name) before ScenariosDir's.
	ScenarioYAML []string
	// Scenario is the active scenario's name ("default" when empty).
	Scenario string
	// Fixtures is a fixture file or directory replacing the embedded default.
	Fixtures string
	// Seed seeds every random choice of the world (1 when zero).
	Seed int64
	// ClockMode is real (default), manual, auto, or scaled (ClockScaled(N)).
	ClockMode clock.Mode
	// AutoIdle is how long an auto clock's world must be idle before its clock jumps to
	// the next in-flight transition (20 ms when zero).
	AutoIdle time.Duration
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
	// ControlAddr, when set, gives the control API its own listener (and takes it off
	// Addr, which keeps only /_emulator/health).
	ControlAddr string
	// ControlOrigins are web origins allowed to drive the control API besides the
	// emulator's own; requests from any other origin are 403 forbidden_origin.
	ControlOrigins []string
	// MaxWorldBytes bounds the worlds of all namespaces together, as estimated from their
	// state and what a bundle or the namespace brought besides (lifecycle anchors,
	// events, faults, journal, scenario sources) (1 GiB when 0): beyond it, creating a
	// namespace, importing a state or a bundle into one, or an API call that would grow
	// one (a deployment, a domain, a token, an upload's digest) is 507 storage_full. The
	// default world is held to it on its own as it grows and is imported into (its
	// fixtures are bounded by --fixtures); an import or a bundle that alone is over it is
	// 413 payload_too_large.
	MaxWorldBytes int64
	// ProxyDomains are custom domains (suffix patterns: "example.com" covers it and its
	// subdomains, ".dev" every name ending so) the proxy serves, CONNECT included, besides
	// deployment hosts and the reserved test names (.test, .example, .invalid,
	// .localhost, example.com/.net/.org). A custom domain with another name is served
	// by Host header on the listener, never through the proxy.
	ProxyDomains []string
	// MaxFaults bounds the faults each world holds, API-added and its scenario's
	// together (1,000 when 0): every request is matched against them. Beyond it,
	// POST /_emulator/faults, switching to a scenario, or a bundle is 400 naming
	// --max-faults.
	MaxFaults int
	// JournalSize bounds the request journal (1,000 when zero).
	JournalSize int
	// EdgeDomain is the domain deployment hosts live under (hostemu.localhost when
	// empty): https://<project>-<suffix>.<EdgeDomain>.
	EdgeDomain string
	// FileStoreSize bounds the uploaded file contents kept for the edge, in bytes
	// (256 MiB when 0); beyond it POST /v1/files is 507 storage_full.
	FileStoreSize int64
	// StateFile, when set, is loaded at start if present (with the changes logged
	// beside it in StateFile+".log"), and every change is synced to that log before
	// the request that made it is answered.
	StateFile string
	// Logger receives the emulator's logs (discarded when nil).
	Logger *slog.Logger
	// Version is reported by health and the banner.
	Version string
	// Limits bound time, connections and memory a client can take (defaults when zero).
	Limits Limits
	// NamespaceTTL is how long a namespace may go unused before it is deleted (30 min
	// when 0).
	NamespaceTTL time.Duration
	// MaxNamespaces bounds the namespaces live at once (1,000 when 0); beyond it POST
	// /_emulator/namespaces is 429 namespace_limit.
	MaxNamespaces int

	// namespaceClock is the wall clock that idle expiry reads (time.Now when nil); only
	// tests set it (export_test.go), to expire namespaces without waiting.
	namespaceClock func() time.Time
	// compactMin is the --state log size that starts a compaction whatever the
	// snapshot's size (persist.DefaultCompactMin when 0); only tests set it.
	compactMin int64
	// importWait is how long an import waits for the one under way (30 s when 0); a
	// test under -race sets it longer.
	importWait time.Duration
	// urlForm is how deployment URLs are written; Listen sets it from its listeners.
	urlForm state.URLForm
	// tlsURL is the HTTPS listener's base URL ("" without one); Listen sets it. Links
	// in answers served through a CONNECT tunnel point there.
	tlsURL string
}

// edgeURLForm is the scheme and port of deployment URLs: EdgeURLPort's, else what
// Listen found.
func (o Options) edgeURLForm() state.URLForm {
	if o.EdgeURLPort != 0 {
		return state.URLForm{Scheme: "https", Port: o.EdgeURLPort}
	}
	return o.urlForm
}

// LoopbackOnly reports whether the listeners the control API answers on bind loopback
// addresses only (an empty Addr is 127.0.0.1:0). Control requests must then name a
// loopback host.
func (o Options) LoopbackOnly() bool {
	if o.ControlAddr != "" {
		return loopbackAddr(o.ControlAddr)
	}
	return loopbackAddr(o.Addr) && (o.CipherAddr == "" || loopbackAddr(o.CipherAddr)) &&
		(o.TLSAddr == "" || loopbackAddr(o.TLSAddr))
}

// ControlExposed reports whether the control API can be reached from beyond this
// machine with no token to guard it: worth a warning at start.
func (o Options) ControlExposed() bool {
	if o.ControlAddr != "" {
		return o.ControlToken == "" && !loopbackAddr(o.ControlAddr)
	}
	return o.ControlToken == "" && (!loopbackAddr(o.Addr) || (o.TLSAddr != "" && !loopbackAddr(o.TLSAddr)))
}

// controlAddr is where the control API listens (beyond loopback, for the warning).
func (o Options) controlAddr() string {
	switch {
	case o.ControlAddr != "":
		return o.ControlAddr
	case !loopbackAddr(o.Addr) || o.TLSAddr == "":
		return o.Addr
	}
	return o.TLSAddr
}

// loopbackAddr reports whether a listen address binds loopback only ("" is
// 127.0.0.1:0; a name other than localhost may resolve anywhere).
func loopbackAddr(addr string) bool {
	if addr == "" {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
