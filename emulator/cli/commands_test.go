package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCommandDispatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // substring; "" means empty
		stderr string // substring; "" means empty
	}{
		{[]string{"help"}, 0, "hostemu healthcheck [--url U]", ""},
		{[]string{"-h"}, 0, "--cipher-addr", ""},
		{[]string{"--help"}, 0, "hostemu validate FILE|DIR...", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"Serve"}, 2, "", "Commands:"},
		{[]string{"version"}, 0, "hostemu " + stamped.Version, ""},
		{[]string{"--version"}, 0, "commit: ", ""},
		{[]string{"version", "extra"}, 2, "", "no arguments"},
		{[]string{"validate"}, 2, "", "no files given"},
		{[]string{"validate", "--strict", "x"}, 2, "", "unknown flag -strict"},
		{[]string{"validate", "-h"}, 0, "Usage: hostemu validate", ""},
		{[]string{"healthcheck", "-h"}, 0, "Usage: hostemu healthcheck", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCmd(t, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			for _, c := range []struct{ name, got, want string }{{"stdout", stdout, tc.stdout}, {"stderr", stderr, tc.stderr}} {
				if c.want == "" && c.got != "" || !strings.Contains(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runCmd(t, nil, "version")
	ver, rev := buildVersion()
	for _, want := range []string{"hostemu " + ver + "\n", "commit: " + rev + "\n", runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestHealthURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, addr, want string
	}{
		{"", "", "http://127.0.0.1:4700/_emulator/health"},
		{"", "0.0.0.0:4700", "http://127.0.0.1:4700/_emulator/health"},
		{"", "[::]:4800", "http://127.0.0.1:4800/_emulator/health"},
		{"", ":4900", "http://127.0.0.1:4900/_emulator/health"},
		{"", "127.0.0.1:5000", "http://127.0.0.1:5000/_emulator/health"},
		{"", "[::1]:5000", "http://[::1]:5000/_emulator/health"},
		{"", "hostemu:4700", "http://hostemu:4700/_emulator/health"},
		{"http://hostemu:4700", "0.0.0.0:1", "http://hostemu:4700/_emulator/health"},
		{"http://hostemu:4700/", "", "http://hostemu:4700/_emulator/health"},
		{"https://emu.test/prefix/", "", "https://emu.test/prefix/_emulator/health"},
		{"hostemu:4700", "", "http://hostemu:4700/_emulator/health"},
		{"http://h:1/_emulator/health", "", "http://h:1/_emulator/health"},
	} {
		got, err := healthURL(tc.flag, env(map[string]string{"HOSTEMU_ADDR": tc.addr}))
		if err != nil || got != tc.want {
			t.Errorf("healthURL(%q, HOSTEMU_ADDR=%q) = %q, %v; want %q", tc.flag, tc.addr, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ flag, addr, want string }{
		{"", "4700", "HOSTEMU_ADDR"},
		{"", "127.0.0.1:0", "HOSTEMU_ADDR"},
		{"ftp://h:1", "", "--url"},
		{"http://", "", "--url"},
	} {
		if _, err := healthURL(tc.flag, env(map[string]string{"HOSTEMU_ADDR": tc.addr})); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("healthURL(%q, HOSTEMU_ADDR=%q) = %v, want an error naming %s", tc.flag, tc.addr, err, tc.want)
		}
	}
}

// TestHealthcheck is not parallel: it shortens healthTimeout for its slow case.
func TestHealthcheck(t *testing.T) {
	status := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/_emulator/health" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(code)
		})
	}
	release := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	dead := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return "http://" + ln.Addr().String()
	}()

	for _, tc := range []struct {
		name    string
		handler http.Handler // nil: use url as is
		url     string
		timeout time.Duration
		code    int
		stderr  string
	}{
		{name: "200", handler: status(200), code: 0},
		{name: "500", handler: status(500), code: 1, stderr: "500 Internal Server Error"},
		{name: "503", handler: status(503), code: 1, stderr: "503"},
		{name: "no health route", handler: http.NotFoundHandler(), code: 1, stderr: "404"},
		{name: "dead address", url: dead, code: 1, stderr: "connection refused"},
		{name: "slower than the timeout", handler: slow, timeout: 100 * time.Millisecond, code: 1, stderr: "no answer within 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.timeout != 0 {
				old := healthTimeout
				healthTimeout = tc.timeout
				t.Cleanup(func() { healthTimeout = old })
			}
			url := tc.url
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				url = srv.URL
			}
			code, stdout, stderr := runCmd(t, nil, "healthcheck", "--url", url)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.stderr)
			}
			if code == 0 && !strings.Contains(stdout, "healthy") {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
	close(release)

	t.Run("default URL from HOSTEMU_ADDR", func(t *testing.T) {
		srv := httptest.NewServer(status(200))
		defer srv.Close()
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		if code, _, stderr := runCmd(t, map[string]string{"HOSTEMU_ADDR": "0.0.0.0:" + port}, "healthcheck"); code != 0 {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("bad arguments exit 1", func(t *testing.T) {
		for _, args := range [][]string{{"--url", "ftp://x"}, {"--nope"}, {"extra"}, {"--url"}} {
			if code, _, _ := runCmd(t, nil, append([]string{"healthcheck"}, args...)...); code != 1 {
				t.Errorf("healthcheck %q: exit %d, want 1", args, code)
			}
		}
	})
}

// TestValidate is not parallel where it replaces the validateFiles hook.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml":    "name: fast\ndeployments:\n  lifecycle: [{status: queued}, {status: building}, {status: ready}]\n",
		"b.yml":     "description: only a description\n",
		"fix.yaml":  "tokens: [{token: x, scope: read}]\nprojects: [{id: prj_a, name: a}]\n",
		"fix2.yaml": "projects: [{id: prj_b, name: b, deployments: [{id: dpl_b, status: ready}]}]\n",
		"notes.txt": "not yaml",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")

	code, stdout, _ := runCmd(t, nil, "validate", dir)
	for _, want := range []string{`scenario "fast" ok`, `scenario "b" ok`, "fixtures ok: 1 tokens, 2 projects, 1 deployments"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("validate DIR: exit %d, stdout %q lacks %q", code, stdout, want)
		}
	}
	code, stdout, stderr := runCmd(t, nil, "validate", dir, missing, empty)
	wantLines := []string{missing + ": no such file or directory", empty + ": no *.yaml or *.yml files"}
	if code != 1 || strings.TrimSpace(stdout) != strings.Join(wantLines, "\n") || !strings.Contains(stderr, "2 problem(s)") {
		t.Errorf("validate with problems: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "s.yaml"), []byte("name: s\ndeployments:\n  lifecycle:\n    - status: queued\n    - status: shipped\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "f.yaml"), []byte("tokens:\n  - {token: x, scope: root}\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "g.yaml"), []byte("projects: [{id: prj_a, name: a}]\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "h.yaml"), []byte("projects: [{id: prj_a, name: again}]\n"), 0o644)
	code, stdout, _ = runCmd(t, nil, "validate", bad)
	for _, want := range []string{filepath.Join(bad, "s.yaml") + ":5:", filepath.Join(bad, "f.yaml") + ":2:", filepath.Join(bad, "h.yaml") + ":1:"} {
		if code != 1 || !strings.Contains(stdout, want) {
			t.Errorf("validate of broken files: exit %d, stdout %q lacks %q", code, stdout, want)
		}
	}

	old := validateFiles
	t.Cleanup(func() { validateFiles = old })
	var got []string
	validateFiles = func(paths []string) ([]string, []string) {
		got = paths
		return nil, []string{"s.yaml:3: unknown key \"foo\"", "f.yaml:1: tokens: want a list"}
	}
	code, stdout, _ = runCmd(t, nil, "validate", "s.yaml", "f.yaml")
	if code != 1 || stdout != "s.yaml:3: unknown key \"foo\"\nf.yaml:1: tokens: want a list\n" || strings.Join(got, ",") != "s.yaml,f.yaml" {
		t.Errorf("validate with a hook's problems: exit %d, stdout %q, paths %q", code, stdout, got)
	}
	validateFiles = func([]string) ([]string, []string) { return []string{"2 scenarios, 1 fixture: ok"}, nil }
	if code, stdout, _ = runCmd(t, nil, "validate", "x"); code != 0 || stdout != "2 scenarios, 1 fixture: ok\n" {
		t.Errorf("validate with a hook's summary: exit %d, stdout %q", code, stdout)
	}
}
