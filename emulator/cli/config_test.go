package cli

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// env is a getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// environ lists vars as os.Environ does.
func environ(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func defaultConfig() Config {
	return Config{
		Options: emulator.Options{
			Addr:        "127.0.0.1:4700",
			Scenario:    "default",
			Seed:        1,
			ClockMode:   emulator.ClockReal,
			CORSOrigins: []string{"*"},
			JournalSize: 1000,
			EdgeDomain:  "hostemu.localhost",
			TLSAddr:     "127.0.0.1:4743", TLSAddrFallback: true,
			FileStoreSize: 256 << 20,
			NamespaceTTL:  30 * time.Minute,
			MaxNamespaces: 1000,
			AutoIdle:      20 * time.Millisecond,
			MaxWorldBytes: 1 << 30, MaxFaults: 1000,
			Limits: emulator.Limits{
				IdleTimeout: emulator.DefaultIdleTimeout, ReadHeaderTimeout: emulator.DefaultReadHeaderTimeout,
				BodyReadTimeout: emulator.DefaultBodyReadTimeout, MinBodyRate: emulator.DefaultMinBodyRate,
				MaxConnections: emulator.DefaultMaxConnections, MaxBodyBytesInFlight: emulator.DefaultMaxBodyBytesInFlight,
				MaxStateBytes: emulator.DefaultMaxStateBytes, WriteStallTimeout: emulator.DefaultWriteStallTimeout, MaxEventStreams: 64,
			},
		},
		LogFormat: "text",
		LogLevel:  slog.LevelInfo,
	}
}

func loadOK(t *testing.T, args []string, vars map[string]string) Config {
	t.Helper()
	c, err := Load(args, env(vars))
	if err != nil {
		t.Fatalf("Load(%q, %v): %v", args, vars, err)
	}
	c.origin = nil
	return c
}

func checkConfig(t *testing.T, got Config, edit func(*Config)) {
	t.Helper()
	want := defaultConfig()
	edit(&want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	checkConfig(t, loadOK(t, nil, nil), func(*Config) {})
	// A variable set to the empty string counts as unset.
	empty := map[string]string{}
	for _, s := range settings {
		empty[envName(s.name)] = ""
	}
	checkConfig(t, loadOK(t, nil, empty), func(*Config) {})
}

// valid holds, for every flag, a good value and what it sets, plus a second good value
// (alt) used as the losing variable in flag-beats-env cases.
var valid = map[string][]struct {
	value string
	edit  func(*Config)
}{
	"addr": {
		{"0.0.0.0:4700", func(c *Config) { c.Options.Addr = "0.0.0.0:4700" }},
		{":8080", func(c *Config) { c.Options.Addr = ":8080" }},
		{"[::1]:0", func(c *Config) { c.Options.Addr = "[::1]:0" }},
		{"localhost:65535", func(c *Config) { c.Options.Addr = "localhost:65535" }},
	},
	"cipher-addr": {
		{"127.0.0.1:4701", func(c *Config) { c.Options.CipherAddr = "127.0.0.1:4701" }},
		{"", func(c *Config) {}},
	},
	"tls-addr": { // a port the user names is theirs: taken, it is an error
		{"0.0.0.0:4743", func(c *Config) { c.Options.TLSAddr, c.Options.TLSAddrFallback = "0.0.0.0:4743", false }},
		{"127.0.0.1:4743", func(c *Config) { c.Options.TLSAddrFallback = false }},
		{"off", func(c *Config) { c.Options.TLSAddr, c.Options.TLSAddrFallback = "", false }},
		{"OFF", func(c *Config) { c.Options.TLSAddr, c.Options.TLSAddrFallback = "", false }},
		{"", func(c *Config) { c.Options.TLSAddr, c.Options.TLSAddrFallback = "", false }},
	},
	"edge-url-port": {
		{"443", func(c *Config) { c.Options.EdgeURLPort = 443 }},
		{"8443", func(c *Config) { c.Options.EdgeURLPort = 8443 }},
		{"", func(c *Config) {}},
	},
	"ca-dir": { // the default, the user's config directory, is serve's to find (resolveCADir)
		{"/home/me/.hostemu-ca", func(c *Config) { c.Options.CADir = "/home/me/.hostemu-ca" }},
		{":memory:", func(c *Config) {}},
		{"", func(c *Config) {}},
	},
	"public-url": {
		{"https://emu.test:8443/base/", func(c *Config) { c.Options.PublicURL = "https://emu.test:8443/base" }},
		{"http://hostemu:4700", func(c *Config) { c.Options.PublicURL = "http://hostemu:4700" }},
		{"", func(c *Config) {}},
	},
	"scenarios": {
		{"/scenarios", func(c *Config) { c.Options.ScenariosDir = "/scenarios" }},
		{"./my scenarios", func(c *Config) { c.Options.ScenariosDir = "./my scenarios" }},
	},
	"scenario": {
		{"slow-builds", func(c *Config) { c.Options.Scenario = "slow-builds" }},
	},
	"fixtures": {
		{"/fixtures/shop.yaml", func(c *Config) { c.Options.Fixtures = "/fixtures/shop.yaml" }},
		{"fixtures", func(c *Config) { c.Options.Fixtures = "fixtures" }},
	},
	"seed": {
		{"42", func(c *Config) { c.Options.Seed = 42 }},
		{"-7", func(c *Config) { c.Options.Seed = -7 }},
		{"9223372036854775807", func(c *Config) { c.Options.Seed = 1<<63 - 1 }},
		{"0", func(c *Config) { c.Options.Seed = 0 }},
	},
	"clock": {
		{"manual", func(c *Config) { c.Options.ClockMode = emulator.ClockManual }},
		{"real", func(c *Config) {}},
		{"auto", func(c *Config) { c.Options.ClockMode = emulator.ClockAuto }},
		{"scaled:100", func(c *Config) { c.Options.ClockMode = emulator.ClockScaled(100) }},
		{"scaled:2.50", func(c *Config) { c.Options.ClockMode = emulator.ClockScaled(2.5) }},
		{"scaled:10000", func(c *Config) { c.Options.ClockMode = emulator.ClockScaled(10000) }},
	},
	"auto-idle": {
		{"20ms", func(c *Config) { c.Options.AutoIdle = 20 * time.Millisecond }},
		{"1ms", func(c *Config) { c.Options.AutoIdle = time.Millisecond }},
		{"10s", func(c *Config) { c.Options.AutoIdle = 10 * time.Second }},
	},
	"clock-start": {
		{"2026-01-02T03:04:05+02:00", func(c *Config) { c.Options.ClockStart = time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC) }},
		{"2026-11-01T10:00:00.5Z", func(c *Config) { c.Options.ClockStart = time.Date(2026, 11, 1, 10, 0, 0, 5e8, time.UTC) }},
		{"", func(c *Config) {}},
	},
	"rate-limits": {
		{"off", func(c *Config) { c.Options.RateLimitsOff = true }},
		{"on", func(c *Config) {}},
		{"OFF", func(c *Config) { c.Options.RateLimitsOff = true }},
		{"false", func(c *Config) { c.Options.RateLimitsOff = true }},
		{"true", func(c *Config) {}},
	},
	"trusted-proxies": {
		{"10.0.0.0/8, 192.168.1.7,2001:db8::/32,::1,", func(c *Config) {
			c.Options.TrustedProxies = []netip.Prefix{
				netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
				netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("::1/128"),
			}
		}},
		{"172.16.5.4/12", func(c *Config) { c.Options.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("172.16.0.0/12")} }},
		{"", func(c *Config) {}},
	},
	"edge-domain": {
		{"Apps.Test.", func(c *Config) { c.Options.EdgeDomain = "apps.test" }},
		{"hostemu.localhost", func(c *Config) { c.Options.EdgeDomain = "hostemu.localhost" }},
	},
	"namespace-ttl": {
		{"5m", func(c *Config) { c.Options.NamespaceTTL = 5 * time.Minute }},
		{"2h", func(c *Config) { c.Options.NamespaceTTL = 2 * time.Hour }},
	},
	"max-namespaces": {
		{"32", func(c *Config) { c.Options.MaxNamespaces = 32 }},
		{"1", func(c *Config) { c.Options.MaxNamespaces = 1 }},
	},
	"file-store-size": {
		{"1GiB", func(c *Config) { c.Options.FileStoreSize = 1 << 30 }},
	},
	"control-addr": {
		{"127.0.0.1:4702", func(c *Config) { c.Options.ControlAddr = "127.0.0.1:4702" }},
		{"", func(c *Config) {}},
	},
	"proxy-domains": {
		{"github.com, .DEV, *.corp.example", func(c *Config) { c.Options.ProxyDomains = []string{"github.com", ".dev", ".corp.example"} }},
		{"", func(c *Config) {}},
	},
	"max-world-bytes": {
		{"2GiB", func(c *Config) { c.Options.MaxWorldBytes = 2 << 30 }},
	},
	"write-stall-timeout": {
		{"2s", func(c *Config) { c.Options.Limits.WriteStallTimeout = 2 * time.Second }},
	},
	"max-faults": {
		{"50", func(c *Config) { c.Options.MaxFaults = 50 }},
	},
	"max-event-streams": {
		{"8", func(c *Config) { c.Options.Limits.MaxEventStreams = 8 }},
	},
	"control-origins": {
		{"https://dash.test, http://127.0.0.1:5173/", func(c *Config) { c.Options.ControlOrigins = []string{"https://dash.test", "http://127.0.0.1:5173"} }},
		{"", func(c *Config) {}},
	},
	"cors-origins": {
		{"https://app.test, http://localhost:3000/", func(c *Config) {
			c.Options.CORSOrigins = []string{"https://app.test", "http://localhost:3000"}
		}},
		{"*", func(c *Config) {}},
	},
	"control-token": {
		{"s3cret-token", func(c *Config) { c.Options.ControlToken = "s3cret-token" }},
		{"", func(c *Config) {}},
	},
	"journal-size": {
		{"5", func(c *Config) { c.Options.JournalSize = 5 }},
		{"1", func(c *Config) { c.Options.JournalSize = 1 }},
	},
	"idle-timeout": {
		{"100ms", func(c *Config) { c.Options.Limits.IdleTimeout = 100 * time.Millisecond }},
		{"2m", func(c *Config) { c.Options.Limits.IdleTimeout = 2 * time.Minute }},
	},
	"read-header-timeout": {
		{"5s", func(c *Config) { c.Options.Limits.ReadHeaderTimeout = 5 * time.Second }},
		{"1m", func(c *Config) { c.Options.Limits.ReadHeaderTimeout = time.Minute }},
	},
	"body-read-timeout": {
		{"30s", func(c *Config) { c.Options.Limits.BodyReadTimeout = 30 * time.Second }},
		{"1s", func(c *Config) { c.Options.Limits.BodyReadTimeout = time.Second }},
	},
	"min-body-rate": {
		{"64KiB", func(c *Config) { c.Options.Limits.MinBodyRate = 64 << 10 }},
		{"1000", func(c *Config) { c.Options.Limits.MinBodyRate = 1000 }},
		{"2 mib", func(c *Config) { c.Options.Limits.MinBodyRate = 2 << 20 }},
	},
	"max-connections": {
		{"100", func(c *Config) { c.Options.Limits.MaxConnections = 100 }},
		{"16", func(c *Config) { c.Options.Limits.MaxConnections = 16 }},
	},
	"max-body-bytes-in-flight": {
		{"1GiB", func(c *Config) { c.Options.Limits.MaxBodyBytesInFlight = 1 << 30 }},
		{"32MiB", func(c *Config) { c.Options.Limits.MaxBodyBytesInFlight = 32 << 20 }},
		{"67108864B", func(c *Config) { c.Options.Limits.MaxBodyBytesInFlight = 64 << 20 }},
	},
	"max-state-bytes": {
		{"16MiB", func(c *Config) { c.Options.Limits.MaxStateBytes = 16 << 20 }},
		{"2GiB", func(c *Config) { c.Options.Limits.MaxStateBytes = 2 << 30 }},
	},
	"state": {
		{"/data/state.json", func(c *Config) { c.Options.StateFile = "/data/state.json" }},
		{"", func(c *Config) {}},
	},
	"log-format": {
		{"json", func(c *Config) { c.LogFormat = "json" }},
		{"text", func(c *Config) {}},
	},
	"quiet": {
		{"true", func(c *Config) { c.Quiet = true }},
		{"false", func(c *Config) {}},
	},
	"watch-stdin": {
		{"true", func(c *Config) { c.WatchStdin = true }},
		{"1", func(c *Config) { c.WatchStdin = true }},
		{"false", func(c *Config) {}},
	},
	"log-level": {
		{"debug", func(c *Config) { c.LogLevel = slog.LevelDebug }},
		{"WARN", func(c *Config) { c.LogLevel = slog.LevelWarn }},
		{"error", func(c *Config) { c.LogLevel = slog.LevelError }},
		{"info", func(c *Config) {}},
	},
}

// invalid holds bad values for every flag.
var invalid = map[string][]string{
	"addr":                     {"4700", "localhost", "127.0.0.1:http", "127.0.0.1:65536", "127.0.0.1:-1"},
	"cipher-addr":              {"4701", "127.0.0.1:99999"},
	"control-addr":             {"4702", "127.0.0.1:99999"},
	"tls-addr":                 {"4743", "127.0.0.1:65536", "localhost", "no"},
	"edge-url-port":            {"0", "65536", "-1", "https", "4743x"},
	"public-url":               {"emu.test", "ftp://emu.test", "/relative", "http://", "https://emu.test/?q=1", "https://emu.test/#x", "http://u:p@emu.test"},
	"seed":                     {"abc", "1.5", "9223372036854775808", "0x10"},
	"clock":                    {"fake", "Manual", "scaled", "scaled:0", "scaled:0.5", "scaled:10001", "scaled:fast", "scaled:NaN", "auto:2"},
	"auto-idle":                {"0", "500us", "11s", "-1ms", "20", "soon"},
	"clock-start":              {"2026-01-02", "yesterday", "1700000000", "2026-01-02 03:04:05Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2200-01-01T00:00:00Z"},
	"rate-limits":              {"maybe", "1"},
	"trusted-proxies":          {"10.0.0.0/33", "not-an-ip", "10.0.0.0/8;192.168.0.1", "fe80::1%eth0", "300.1.1.1"},
	"cors-origins":             {"app.test", "https://app.test/path", " , ", "https://u@app.test"},
	"control-origins":          {"*", "https://dash.test,*", "dash.test", "https://dash.test/x"},
	"control-token":            {"two words", "tab\there"},
	"proxy-domains":            {"exa mple.com", "http://github.com", "-x.com", "a..b"},
	"write-stall-timeout":      {"0", "-1s", "10"},
	"max-world-bytes":          {"0", "-1", "lots", "1KiB"},
	"max-event-streams":        {"0", "-1", "many"},
	"max-faults":               {"0", "-1", "many"},
	"journal-size":             {"0", "-1", "many", "1.5"},
	"idle-timeout":             {"0", "-1s", "60", "soon"},
	"read-header-timeout":      {"0s", "10"},
	"body-read-timeout":        {"-5s", "x"},
	"min-body-rate":            {"0", "-1KiB", "fast", "1.5MiB", "1TiB", "99999999999GiB"},
	"max-connections":          {"0", "15", "-1", "lots", "1e4"},
	"max-body-bytes-in-flight": {"1MiB", "31MiB", "0", "huge"},
	"max-state-bytes":          {"0", "-1", "1.5GiB", "MiB"},
	"edge-domain":              {"localhost", "a..b", "-x.test", "exa mple.test", "*.test"},
	"file-store-size":          {"0", "-1", "lots"},
	"namespace-ttl":            {"0", "-1m", "30", "later"},
	"max-namespaces":           {"0", "-1", "many", "1.5"},
	"log-format":               {"xml", "JSON"},
	"quiet":                    {"maybe", "2"},
	"watch-stdin":              {"maybe", "yes please"},
	"log-level":                {"verbose", "trace", "-4"},
}

// Settings whose only bad value is the empty one given explicitly.
var invalidWhenEmpty = []string{"addr", "scenario", "seed", "clock", "auto-idle", "rate-limits", "cors-origins", "journal-size", "log-format", "log-level",
	"idle-timeout", "read-header-timeout", "body-read-timeout", "min-body-rate", "max-connections", "max-body-bytes-in-flight", "max-state-bytes",
	"namespace-ttl", "max-namespaces"}

func TestLoadCoversEveryFlag(t *testing.T) {
	t.Parallel()
	for _, s := range settings {
		if len(valid[s.name]) == 0 {
			t.Errorf("no valid values for --%s in the test table", s.name)
		}
	}
	if len(valid) != len(settings) {
		t.Errorf("test table has %d flags, Load %d", len(valid), len(settings))
	}
}

func TestLoadFlagAndEnv(t *testing.T) {
	t.Parallel()
	for _, s := range settings {
		for _, v := range valid[s.name] {
			t.Run(s.name+"="+v.value, func(t *testing.T) {
				t.Parallel()
				// --name=value, -name value, and the variable all give the same config.
				checkConfig(t, loadOK(t, []string{"--" + s.name + "=" + v.value}, nil), v.edit)
				if switches[s.name] { // a switch: a value goes after =
					checkConfig(t, loadOK(t, []string{"-" + s.name + "=" + v.value}, nil), v.edit)
				} else {
					checkConfig(t, loadOK(t, []string{"-" + s.name, v.value}, nil), v.edit)
				}
				if v.value != "" {
					checkConfig(t, loadOK(t, nil, map[string]string{envName(s.name): v.value}), v.edit)
				}
			})
		}
	}
}

func TestLoadFlagBeatsEnv(t *testing.T) {
	t.Parallel()
	for _, s := range settings {
		vals := valid[s.name]
		for i, v := range vals {
			loser := vals[(i+1)%len(vals)].value
			if loser == "" {
				loser = s.def
			}
			if loser == "" || len(vals) == 1 {
				loser = v.value // still proves the flag is read with the variable set
			}
			vars := map[string]string{envName(s.name): loser}
			t.Run(s.name+"="+v.value, func(t *testing.T) {
				t.Parallel()
				checkConfig(t, loadOK(t, []string{"--" + s.name + "=" + v.value}, vars), v.edit)
			})
		}
	}
	t.Run("an empty flag beats a variable", func(t *testing.T) {
		t.Parallel()
		vars := map[string]string{"HOSTEMU_PUBLIC_URL": "https://emu.test", "HOSTEMU_CONTROL_TOKEN": "tok"}
		checkConfig(t, loadOK(t, []string{"--public-url=", "--control-token="}, vars), func(*Config) {})
	})
	t.Run("flags and variables mix", func(t *testing.T) {
		t.Parallel()
		vars := map[string]string{"HOSTEMU_SEED": "9", "HOSTEMU_CLOCK": "manual", "HOSTEMU_ADDR": "0.0.0.0:4700"}
		checkConfig(t, loadOK(t, []string{"--seed", "3"}, vars), func(c *Config) {
			c.Options.Seed, c.Options.ClockMode, c.Options.Addr = 3, emulator.ClockManual, "0.0.0.0:4700"
		})
	})
}

func TestLoadBadValues(t *testing.T) {
	t.Parallel()
	type bad struct{ name, value string }
	var cases []bad
	for _, s := range settings {
		for _, v := range invalid[s.name] {
			cases = append(cases, bad{s.name, v})
		}
	}
	for _, name := range invalidWhenEmpty {
		cases = append(cases, bad{name, ""})
	}
	// Any string is a good path; checkPaths looks at the files (TestCheckPaths).
	anyValue := map[string]bool{"scenarios": true, "fixtures": true, "state": true, "ca-dir": true}
	for _, s := range settings {
		if !anyValue[s.name] && len(invalid[s.name]) == 0 && !slices.Contains(invalidWhenEmpty, s.name) {
			t.Errorf("no bad values for --%s in the test table", s.name)
		}
	}
	for _, c := range cases {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Parallel()
			_, err := Load([]string{"--" + c.name + "=" + c.value}, env(nil))
			wantNamed(t, err, "--"+c.name, c.value)
			if c.value == "" {
				return // an empty variable counts as unset
			}
			_, err = Load(nil, env(map[string]string{envName(c.name): c.value}))
			wantNamed(t, err, envName(c.name), c.value)
			// A good flag hides a bad variable.
			good := valid[c.name][0].value
			if _, err := Load([]string{"--" + c.name + "=" + good}, env(map[string]string{envName(c.name): c.value})); err != nil {
				t.Errorf("good flag with bad variable: %v", err)
			}
		})
	}
}

func wantNamed(t *testing.T, err error, name, value string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s %q: no error", name, value)
	}
	if msg := err.Error(); !strings.Contains(msg, name+" "+strconv.Quote(value)) {
		t.Errorf("%s %q: error %q does not name both", name, value, msg)
	}
}

func TestLoadCommandLineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "unknown flag -nope (see hostemu serve -h)"},
		{[]string{"--adr", "127.0.0.1:0"}, "unknown flag -adr (did you mean --addr?)"},
		{[]string{"--addr"}, "flag -addr needs a value"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--seed", "2", "extra"}, `unexpected argument "extra"`},
	} {
		_, err := Load(tc.args, env(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		if _, err := Load([]string{h}, env(nil)); !errors.Is(err, errHelp) {
			t.Errorf("Load(%q) = %v, want errHelp", h, err)
		}
	}
}

func TestCheckPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(file, []byte("tokens: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		args []string
		vars map[string]string
		want []string // substrings; none means no error
	}{
		{"all good", []string{"--scenarios", dir, "--fixtures", file, "--state", filepath.Join(dir, "new.json")}, nil, nil},
		{"fixtures dir", []string{"--fixtures", dir, "--state", file}, nil, nil},
		{"scenarios missing", []string{"--scenarios", missing}, nil, []string{"--scenarios", missing, "no such file"}},
		{"scenarios from env", nil, map[string]string{"HOSTEMU_SCENARIOS": missing}, []string{"HOSTEMU_SCENARIOS", missing}},
		{"scenarios is a file", []string{"--scenarios", file}, nil, []string{"--scenarios", "not a directory"}},
		{"fixtures missing", []string{"--fixtures", missing}, nil, []string{"--fixtures", missing, "no such file"}},
		{"state is a directory", []string{"--state", dir}, nil, []string{"--state", "is a directory"}},
		{"state dir missing", []string{"--state", filepath.Join(missing, "s.json")}, nil, []string{"--state", "directory does not exist"}},
		{"state from env", nil, map[string]string{"HOSTEMU_STATE": filepath.Join(missing, "s.json")}, []string{"HOSTEMU_STATE"}},
		{"two problems", []string{"--scenarios", missing, "--fixtures", missing}, nil, []string{"--scenarios", "--fixtures"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, env(tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			err = c.checkPaths(os.Stat)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("checkPaths: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkPaths: no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("checkPaths: %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"addr": "HOSTEMU_ADDR", "cipher-addr": "HOSTEMU_CIPHER_ADDR", "log-format": "HOSTEMU_LOG_FORMAT"} {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A HOSTEMU_* variable no flag reads is named, with the nearest known name when one is
// close; known ones, HOSTEMU_URL and other programs' variables are not.
func TestUnknownVariables(t *testing.T) {
	tests := []struct {
		environ []string
		want    []string
	}{
		{nil, nil},
		{[]string{"HOSTEMU_CLOCK=manual", "HOSTEMU_ADDR=0.0.0.0:4700", "HOSTEMU_URL=http://hostemu:4700", "PATH=/bin", "HOSTEMUX=1"}, nil},
		{[]string{"HOSTEMU_CLOK=manual"}, []string{"unknown variable HOSTEMU_CLOK is ignored (did you mean HOSTEMU_CLOCK?)"}},
		{[]string{"HOSTEMU_PUBLICURL=http://x"}, []string{"unknown variable HOSTEMU_PUBLICURL is ignored (did you mean HOSTEMU_PUBLIC_URL?)"}},
		{[]string{"HOSTEMU_SCENARO=slow"}, []string{"unknown variable HOSTEMU_SCENARO is ignored (did you mean HOSTEMU_SCENARIO?)"}},
		{[]string{"HOSTEMU_CONTROLTOKEN=x"}, []string{"unknown variable HOSTEMU_CONTROLTOKEN is ignored (did you mean HOSTEMU_CONTROL_TOKEN?)"}},
		{[]string{"HOSTEMU_clock=manual"}, []string{"unknown variable HOSTEMU_clock is ignored (did you mean HOSTEMU_CLOCK?)"}},
		{[]string{"HOSTEMU_BANANA=1", "HOSTEMU_="}, []string{"unknown variable HOSTEMU_BANANA is ignored", "unknown variable HOSTEMU_ is ignored"}},
	}
	for _, tt := range tests {
		if got := UnknownVariables(tt.environ); !slices.Equal(got, tt.want) {
			t.Errorf("UnknownVariables(%q) = %q, want %q", tt.environ, got, tt.want)
		}
	}
	for _, s := range settings { // every flag's own variable is known
		if got := UnknownVariables([]string{envName(s.name) + "=x"}); got != nil {
			t.Errorf("%s: %q", envName(s.name), got)
		}
	}
}

// serve logs the warning at start, and still starts.
func TestServeWarnsAboutUnknownVariables(t *testing.T) {
	s := startServe(t, map[string]string{"HOSTEMU_CLOK": "manual"}, "--addr", "127.0.0.1:0")
	if log := s.stderr.String(); !strings.Contains(log, "HOSTEMU_CLOK") || !strings.Contains(log, "HOSTEMU_CLOCK") {
		t.Fatalf("no warning naming HOSTEMU_CLOK and HOSTEMU_CLOCK in the log:\n%s", log)
	}
}

// Whole-number flags say which numbers they take.
func TestLoadCountMessages(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"journal-size":    "want a whole number above 0",
		"max-namespaces":  "want a whole number above 0",
		"max-connections": "want a whole number of at least 16",
	} {
		for _, v := range []string{"0", "x"} {
			_, err := Load([]string{"--" + name + "=" + v}, env(nil))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("--%s=%s: %v, want %q", name, v, err, want)
			}
		}
	}
}
