package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Config is everything `hostemu serve` needs, read from flags and HOSTEMU_* variables.
type Config struct {
	// Options go to emulator.Listen; serve adds Logger and Version.
	Options emulator.Options
	// LogFormat is "text" or "json".
	LogFormat string
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// Quiet prints only the banner's first line (--quiet).
	Quiet bool
	// WatchStdin stops serving, as SIGTERM does, when standard input ends
	// (--watch-stdin): a parent holding the other end of a pipe is gone.
	WatchStdin bool

	// origin names where each path setting came from ("--scenarios" or
	// "HOSTEMU_SCENARIOS"), so that checkPaths can name it.
	origin map[string]string
}

// setting is one serve flag: its default, help text and how it lands in Config.
type setting struct {
	name  string // flag name without dashes; the variable is HOSTEMU_ + upper snake case
	def   string // applied when neither the flag nor the variable is given
	usage string
	apply func(c *Config, v string) error
}

// settings lists every serve flag in the order usage shows them.
var settings = []setting{
	{"addr", "127.0.0.1:4700", "`host:port` of the hosting service and control API", func(c *Config, v string) error {
		return setAddr(&c.Options.Addr, v, true)
	}},
	{"cipher-addr", "", "`host:port` of the decryption service (empty: served on --addr)", func(c *Config, v string) error {
		return setAddr(&c.Options.CipherAddr, v, false)
	}},
	{"control-addr", "", "`host:port` of the control API's own listener (empty: served on --addr)", func(c *Config, v string) error {
		return setAddr(&c.Options.ControlAddr, v, false)
	}},
	{"tls-addr", defaultTLSAddr, "`host:port` serving the hosting service, control API and edge over HTTPS, certificates from the local CA; deployment URLs carry its port (off or empty: none; the default takes a free port when 4743 is in use)", setTLSAddr},
	{"edge-url-port", "", "`port` deployment URLs carry instead of the HTTPS listener's (a reverse proxy's 443)", setEdgeURLPort},
	{"ca-dir", "", "`DIR` keeping the local CA (ca.pem, ca-key.pem mode 0600), created if missing (default <user config dir>/hostemu/ca; :memory: a new CA each start)", setCADir},
	{"public-url", "", "absolute http(s) `URL` used in links to hostemu (empty: the request's scheme and host)", func(c *Config, v string) error {
		u, err := parsePublicURL(v)
		c.Options.PublicURL = u
		return err
	}},
	{"scenarios", "", "`DIR` of scenario YAML files, watched (empty: built-in scenarios only)", func(c *Config, v string) error {
		c.Options.ScenariosDir = v
		return nil
	}},
	{"scenario", "default", "`NAME` of the active scenario", func(c *Config, v string) error {
		c.Options.Scenario = v
		return notEmpty(v)
	}},
	{"fixtures", "", "fixture `FILE|DIR` replacing the embedded fixtures", func(c *Config, v string) error {
		c.Options.Fixtures = v
		return nil
	}},
	{"seed", "1", "`N`, the seed of every random choice (int64)", func(c *Config, v string) (err error) {
		c.Options.Seed, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("want an integer (int64)")
		}
		return nil
	}},
	{"clock", "real", "clock `mode`: real, manual, auto, or scaled:N (emulated time N times as fast as the wall, 1 to 10000)", func(c *Config, v string) (err error) {
		if c.Options.ClockMode, err = clock.ParseMode(v); err != nil {
			return errors.New("want " + clock.Modes)
		}
		return nil
	}},
	{"auto-idle", "20ms", "how long an auto clock's world must go without a request before the clock jumps to its next in-flight transition (`DURATION`, 1ms to 10s)", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d > 10*time.Second {
			return errors.New("want a duration from 1ms to 10s")
		}
		c.Options.AutoIdle = d
		return nil
	}},
	{"clock-start", "", "emulated `RFC3339` time at start (empty: now, to the second)", func(c *Config, v string) (err error) {
		if v == "" {
			return nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return errors.New("want an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
		// Checked here, not only by emulator.New: there the zero time, which
		// 0001-01-01T00:00:00Z is, means "now", and would start the clock on the wall.
		if !state.InRange(t) {
			return fmt.Errorf("want a time in the years %d to %d", state.MinYear, state.LastYear)
		}
		c.Options.ClockStart = t.UTC()
		return nil
	}},
	{"rate-limits", "on", "`on|off`; off still sends the headers but refuses nothing", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "on", "true":
			c.Options.RateLimitsOff = false
		case "off", "false":
			c.Options.RateLimitsOff = true
		default:
			return errors.New("want on or off")
		}
		return nil
	}},
	{"trusted-proxies", "", "comma-separated `CIDRs` (or IPs) whose X-Forwarded-For is believed", func(c *Config, v string) (err error) {
		c.Options.TrustedProxies, err = parsePrefixes(v)
		return err
	}},
	{"cors-origins", "*", "comma-separated allowed `origins` (* for any)", func(c *Config, v string) (err error) {
		c.Options.CORSOrigins, err = parseOrigins(v)
		return err
	}},
	{"control-origins", "", "comma-separated web `origins` allowed to drive the control API besides hostemu's own (empty: none)", func(c *Config, v string) (err error) {
		if v == "" {
			c.Options.ControlOrigins = nil
			return nil
		}
		origins, err := parseOrigins(v)
		if slices.Contains(origins, "*") {
			return errors.New("list origins such as https://dash.test: * would open the control API to every web page")
		}
		c.Options.ControlOrigins = origins
		return err
	}},
	{"control-token", "", "`token` required by the control API, health excepted (empty: open)", func(c *Config, v string) error {
		c.Options.ControlToken = v
		if strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			return errors.New("must not contain spaces or control characters")
		}
		return nil
	}},
	{"journal-size", "1000", "`N` requests kept in the journal (> 0)", func(c *Config, v string) error {
		return setCount(&c.Options.JournalSize, v, 1)
	}},
	{"idle-timeout", "60s", "`duration` a keep-alive connection may wait for its next request", func(c *Config, v string) error {
		return setDuration(&c.Options.Limits.IdleTimeout, v)
	}},
	{"read-header-timeout", "10s", "`duration` a client may take to send a request's headers", func(c *Config, v string) error {
		return setDuration(&c.Options.Limits.ReadHeaderTimeout, v)
	}},
	{"body-read-timeout", "10s", "`duration` a request body may take before --min-body-rate applies", func(c *Config, v string) error {
		return setDuration(&c.Options.Limits.BodyReadTimeout, v)
	}},
	{"min-body-rate", "16KiB", "slowest a request body may arrive, in `bytes` per second (e.g. 16KiB)", func(c *Config, v string) (err error) {
		c.Options.Limits.MinBodyRate, err = parseSize(v, 1)
		return err
	}},
	{"max-connections", "4096", "`N` open connections at most (idle ones are closed first to make room)", func(c *Config, v string) error {
		return setCount(&c.Options.Limits.MaxConnections, v, 16)
	}},
	{"max-body-bytes-in-flight", "256MiB", "`bytes` of request bodies held at once across all requests (at least 32MiB, the largest body)", func(c *Config, v string) (err error) {
		c.Options.Limits.MaxBodyBytesInFlight, err = parseSize(v, 32<<20)
		return err
	}},
	{"max-state-bytes", "256MiB", "`bytes` of a PUT /_emulator/state body at most", func(c *Config, v string) (err error) {
		c.Options.Limits.MaxStateBytes, err = parseSize(v, 1)
		return err
	}},
	{"proxy-domains", "", "comma-separated custom `domains` (example.com covers its subdomains; .dev every name under it) the proxy serves besides deployment hosts and reserved test names", func(c *Config, v string) error {
		c.Options.ProxyDomains = nil
		for _, item := range splitList(v) {
			pattern := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(item), "*"), ".")
			name, ok := state.NormalizeHostname(pattern, false)
			if !ok && !(!strings.Contains(pattern, ".") && state.ValidLabel(pattern)) {
				return fmt.Errorf("%q is not a domain or a suffix such as example.com or .dev", item)
			}
			if name == "" {
				name = pattern
			}
			if strings.HasPrefix(strings.TrimPrefix(item, "*"), ".") {
				name = "." + name
			}
			c.Options.ProxyDomains = append(c.Options.ProxyDomains, name)
		}
		return nil
	}},
	{"max-world-bytes", "1GiB", "`bytes` the namespaces' worlds may take together, and the default world alone (estimated from their state and what a bundle brings); beyond, 507, or 413 for an import or bundle that alone is over", func(c *Config, v string) (err error) {
		c.Options.MaxWorldBytes, err = parseSize(v, 1<<20)
		return err
	}},
	{"max-faults", "1000", "`N` faults each world holds, API-added and its scenario's together (beyond: 400 naming the flag)", func(c *Config, v string) error {
		return setCount(&c.Options.MaxFaults, v, 1)
	}},
	{"write-stall-timeout", "10s", "`duration` a write may wait for a client that stopped reading before its connection is closed", func(c *Config, v string) error {
		return setDuration(&c.Options.Limits.WriteStallTimeout, v)
	}},
	{"max-event-streams", "64", "`N` GET /_emulator/events streams open at once, across namespaces", func(c *Config, v string) error {
		return setCount(&c.Options.Limits.MaxEventStreams, v, 1)
	}},
	{"edge-domain", "hostemu.localhost", "`domain` deployment hosts live under: https://<project>-<suffix>.<domain>", func(c *Config, v string) error {
		h, ok := state.NormalizeHostname(strings.TrimSpace(v), false)
		if !ok {
			return errors.New("want a domain name such as hostemu.localhost")
		}
		c.Options.EdgeDomain = h
		return nil
	}},
	{"file-store-size", "256MiB", "`bytes` of uploaded file contents kept for the edge (beyond: 507 storage_full)", func(c *Config, v string) (err error) {
		c.Options.FileStoreSize, err = parseSize(v, 1)
		return err
	}},
	{"namespace-ttl", "30m", "`duration` a namespace may go unused before it is deleted", func(c *Config, v string) error {
		return setDuration(&c.Options.NamespaceTTL, v)
	}},
	{"max-namespaces", "1000", "`N` namespaces live at most (beyond: 429 namespace_limit)", func(c *Config, v string) error {
		return setCount(&c.Options.MaxNamespaces, v, 1)
	}},
	{"state", "", "state `FILE`, loaded at start when present and saved while running (empty: nothing persisted)", func(c *Config, v string) error {
		c.Options.StateFile = v
		return nil
	}},
	{"log-format", "text", "log `format`: text or json", func(c *Config, v string) error {
		switch v {
		case "text", "json":
			c.LogFormat = v
			return nil
		}
		return errors.New("want text or json")
	}},
	{"quiet", "false", "`true` prints only the banner's first line (hostemu listening on URL), or with --log-format json one record", func(c *Config, v string) (err error) {
		c.Quiet, err = parseSwitch(v)
		return err
	}},
	{"watch-stdin", "false", "`true` reads standard input and stops as on SIGTERM, within a second, when it ends: for a parent that holds a pipe to it, so that hostemu never outlives that parent", func(c *Config, v string) (err error) {
		c.WatchStdin, err = parseSwitch(v)
		return err
	}},
	{"log-level", "info", "minimum log `level`: debug, info, warn or error", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "debug":
			c.LogLevel = slog.LevelDebug
		case "info":
			c.LogLevel = slog.LevelInfo
		case "warn", "warning":
			c.LogLevel = slog.LevelWarn
		case "error":
			c.LogLevel = slog.LevelError
		default:
			return errors.New("want debug, info, warn or error")
		}
		return nil
	}},
}

// envName is the variable that backs a flag: --cipher-addr ← HOSTEMU_CIPHER_ADDR.
func envName(flagName string) string {
	return "HOSTEMU_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// otherVariables are HOSTEMU_* names that are not serve flags but mean something to a
// tool around hostemu (testkit's examples find a running hostemu by HOSTEMU_URL; testkit
// writes failed tests' bundles to HOSTEMU_ARTIFACTS; the JS testkit shares the coverage of
// a run's processes through HOSTEMU_COVERAGE_DIR), and hostemu mutate's coordinator
// (HOSTEMU_MUTANT, for the testkits of the suite it runs).
var otherVariables = []string{"HOSTEMU_URL", "HOSTEMU_ARTIFACTS", "HOSTEMU_COVERAGE_DIR", "HOSTEMU_MUTANT"}

// UnknownVariables names each HOSTEMU_* variable of environ ("NAME=value" entries, as
// os.Environ) that no flag reads, with the nearest known name when one is close, so
// that a misspelling (HOSTEMU_CLOK=manual) is warned about rather than silently
// ignored. Like Load, it only looks at what it is given.
func UnknownVariables(environ []string) []string {
	known := map[string]bool{}
	for _, s := range settings {
		known[envName(s.name)] = true
	}
	for _, n := range otherVariables {
		known[n] = true
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HOSTEMU_") || known[name] {
			continue
		}
		msg := "unknown variable " + name + " is ignored"
		if near := nearestVariable(name, known); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		out = append(out, msg)
	}
	return out
}

// nearestVariable is the known name closest to name, if it is close: at most a third
// of its letters (and at least one) to change.
func nearestVariable(name string, known map[string]bool) string {
	best, bestD := "", 0
	for k := range known {
		d := yamlcheck.EditDistance(strings.ToUpper(strings.TrimPrefix(name, "HOSTEMU_")), strings.TrimPrefix(k, "HOSTEMU_"))
		if best == "" || d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if bestD > max(1, len(strings.TrimPrefix(best, "HOSTEMU_"))/3) {
		return ""
	}
	return best
}

// switches are the settings that may be given alone, meaning true (--quiet).
var switches = map[string]bool{"quiet": true, "watch-stdin": true}

// parseSwitch reads a switch's value: true, 1, on, yes or their opposites, any case.
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "on", "yes":
		return true, nil
	case "false", "0", "off", "no":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// errHelp asks for serve's usage (-h, --help).
var errHelp = flag.ErrHelp

// Load reads serve's flags, each falling back to its HOSTEMU_* variable (a variable set
// to the empty string counts as unset) and then to its default. A flag given on the
// command line wins over its variable, even when empty. It touches no files: see
// Config.checkPaths.
func Load(args []string, getenv func(string) string) (Config, error) {
	fset := flag.NewFlagSet("hostemu serve", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	vals := make(map[string]*string, len(settings))
	for _, s := range settings {
		if switches[s.name] { // --quiet alone means true
			v := &boolString{s: s.def}
			fset.Var(v, s.name, s.usage)
			vals[s.name] = &v.s
			continue
		}
		vals[s.name] = fset.String(s.name, s.def, s.usage)
	}
	if err := fset.Parse(args); err != nil {
		return Config{}, flagError(fset, err)
	}
	if fset.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q (serve takes flags only)", fset.Arg(0))
	}
	given := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { given[f.Name] = true })

	c := Config{origin: map[string]string{}}
	for _, s := range settings {
		v, origin := s.def, "default --"+s.name
		switch {
		case given[s.name]:
			v, origin = *vals[s.name], "--"+s.name
		case getenv(envName(s.name)) != "":
			v, origin = getenv(envName(s.name)), envName(s.name)
		}
		if err := s.apply(&c, v); err != nil {
			return Config{}, fmt.Errorf("invalid %s %q: %v", origin, v, err)
		}
		c.origin[s.name] = origin
	}
	c.Options.TLSAddrFallback = c.origin["tls-addr"] == "default --tls-addr" // a port the user chose stays theirs
	return c, nil
}

// flagError rewords the flag package's errors about fset's flags, which we do not let
// it print: an unknown flag is named with the closest known one, else the command's
// help (fset is named after its command, "hostemu ca install").
func flagError(fset *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		var names []string
		fset.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if best := yamlcheck.Closest(strings.TrimLeft(name, "-"), names); best != "" {
			return fmt.Errorf("unknown flag %s (did you mean --%s?)", name, best)
		}
		return fmt.Errorf("unknown flag %s (see %s -h)", name, fset.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("flag %s needs a value", name)
	}
	return errors.New(msg)
}

// checkPaths checks, with stat, the path settings Load leaves alone to stay pure:
// --scenarios is a directory, --fixtures exists, and --state is not a directory and
// sits in one that exists (the file itself may not exist yet).
func (c Config) checkPaths(stat func(string) (fs.FileInfo, error)) error {
	var errs []error
	bad := func(name, path, why string) {
		errs = append(errs, fmt.Errorf("invalid %s %q: %s", c.origin[name], path, why))
	}
	if p := c.Options.ScenariosDir; p != "" {
		if fi, err := stat(p); err != nil {
			bad("scenarios", p, problem.Reason(err))
		} else if !fi.IsDir() {
			bad("scenarios", p, "not a directory")
		}
	}
	if p := c.Options.Fixtures; p != "" {
		if _, err := stat(p); err != nil {
			bad("fixtures", p, problem.Reason(err))
		}
	}
	if p := c.Options.StateFile; p != "" {
		if fi, err := stat(p); err == nil && fi.IsDir() {
			bad("state", p, "is a directory")
		} else if dir, err := stat(filepath.Dir(p)); err != nil || !dir.IsDir() {
			bad("state", p, "its directory does not exist")
		}
	}
	return errors.Join(errs...)
}

func notEmpty(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// setAddr checks a listen address: host:port with a numeric port; host may be empty
// (all interfaces).
func setAddr(dst *string, v string, required bool) error {
	*dst = v
	if v == "" {
		if required {
			return errors.New("must not be empty")
		}
		return nil
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return errors.New("want host:port, e.g. 127.0.0.1:4700 or 0.0.0.0:4700")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q: want 0 to 65535", port)
	}
	return nil
}

// setCount reads a whole number of at least least (1 or more).
func setCount(dst *int, v string, least int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		if least == 1 {
			return errors.New("want a whole number above 0")
		}
		return fmt.Errorf("want a whole number of at least %d", least)
	}
	*dst = n
	return nil
}

// setDuration reads a Go duration above zero.
func setDuration(dst *time.Duration, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New("want a duration above zero such as 30s or 2m")
	}
	*dst = d
	return nil
}

// sizeUnits are the suffixes parseSize knows, longest first.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// parseSize reads a byte count: a whole number with an optional B, KiB, MiB or GiB
// suffix (any case), at least least.
func parseSize(v string, least int64) (int64, error) {
	bad := fmt.Errorf("want a size of at least %d bytes such as 64KiB, 256MiB or 1GiB", least)
	num, unit := strings.TrimSpace(v), int64(1)
	for _, u := range sizeUnits {
		if len(num) > len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, unit = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/unit || n*unit < least {
		return 0, bad
	}
	return n * unit, nil
}

// parsePublicURL accepts an absolute http(s) URL with a host and no user, query or
// fragment, and strips its trailing slashes ("" for none): serve's --public-url and
// hostemu openapi's.
func parsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("want an absolute http:// or https:// URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New("want a base URL without user, query or fragment")
	}
	return strings.TrimRight(v, "/"), nil
}

// parsePrefixes reads comma-separated CIDRs; a bare address is a single-host prefix.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range splitList(v) {
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8", item)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", item)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// parseOrigins reads comma-separated origins: "*" or scheme://host[:port].
func parseOrigins(v string) ([]string, error) {
	items := splitList(v)
	if len(items) == 0 {
		return nil, errors.New("want * or a list of origins such as https://app.test")
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		if item == "*" {
			out = append(out, item)
			continue
		}
		origin := strings.TrimRight(item, "/")
		u, err := url.Parse(origin)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%q is not an origin such as https://app.test:8080", item)
		}
		out = append(out, origin)
	}
	return out, nil
}

// splitList splits on commas, trims spaces and drops empty items.
func splitList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// serveUsage writes serve's flags with their variables and defaults.
func serveUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: hostemu [serve] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Starts the emulator. Every flag also reads HOSTEMU_<NAME> (--cipher-addr from")
	fmt.Fprintln(w, "HOSTEMU_CIPHER_ADDR); a flag beats its variable.")
	fmt.Fprintln(w)
	for _, s := range settings {
		arg, usage := flag.UnquoteUsage(&flag.Flag{Name: s.name, Usage: s.usage, DefValue: s.def, Value: new(stringValue)})
		fmt.Fprintf(w, "  --%s %s\n    \t%s\n    \t(env %s", s.name, arg, usage, envName(s.name))
		if s.def != "" {
			fmt.Fprintf(w, ", default %s", s.def)
		}
		fmt.Fprintln(w, ")")
	}
}

// stringValue lets flag.UnquoteUsage see a string flag.
type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }

// boolString is a flag value that may be given alone (--quiet, meaning true) or with a
// value (--quiet=false), kept as the text the setting parses.
type boolString struct{ s string }

func (b *boolString) String() string     { return b.s }
func (b *boolString) Set(v string) error { b.s = v; return nil }
func (b *boolString) IsBoolFlag() bool   { return true }

// NameOrigins rewords err, from a start with c, to name each setting as the user gave
// it: a message about "--state" names HOSTEMU_STATE when the variable set it.
func (c Config) NameOrigins(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for name, origin := range c.origin {
		if strings.HasPrefix(origin, "HOSTEMU_") && strings.Contains(msg, "--"+name+" ") {
			msg = strings.ReplaceAll(msg, "--"+name+" ", origin+" ")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return originError{msg: msg, err: err}
}

// originError is an error reworded by NameOrigins; errors.As still finds what it wraps.
type originError struct {
	msg string
	err error
}

func (e originError) Error() string { return e.msg }
func (e originError) Unwrap() error { return e.err }
