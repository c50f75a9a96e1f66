// Package python_test checks hostemu's Python wheels as a user gets them:
// python/build.sh writes them, pip installs this platform's into a fresh virtual
// environment without an index (pytest from the system's packages, through
// --system-site-packages), and the environment runs `python -m hostemu`, the pytest
// suites of python/tests, the SIGKILL lifetime check and mypy --strict over a typed
// example.
package python_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/testkit"
)

// findPython is a python3 that has pytest and venv (Debian's /usr/bin/python3 with
// python3-pytest and python3-venv, which .ci/run installs), or "" when none has.
func findPython() (string, string) {
	candidates := []string{os.Getenv("HOSTEMU_PYTHON"), "/usr/bin/python3", "python3"}
	var why []string
	for _, c := range candidates {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		out, err := exec.Command(p, "-c", "import pytest, venv, ensurepip").CombinedOutput()
		if err == nil {
			return p, ""
		}
		why = append(why, fmt.Sprintf("%s: %s", p, lastLines(string(out), 1)))
	}
	return "", strings.Join(why, "; ")
}

// needPython skips the test without a python3 that has pytest and venv.
func needPython(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("python wheels: skipped with -short (builds hostemu and runs python)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("python wheels: the test drives a POSIX virtual environment")
	}
	py, why := findPython()
	if py == "" {
		t.Skipf("python wheels: no python3 with pytest and venv (apt-get install python3-pytest python3-venv): %s", why)
	}
	return py
}

// result is what a command did: its combined output and exit code.
type result struct {
	out  string
	code int
}

// runIn runs name args in dir with env added and returns its output and exit code; a
// command that cannot start or overruns stops the test.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return result{string(out), 0}
	case errors.As(err, &exit) && ctx.Err() == nil:
		return result{string(out), exit.ExitCode()}
	}
	t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	return result{}
}

// must runs a command that must succeed, and returns its output.
func must(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	r := runIn(t, dir, env, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit code %d\n%s", name, strings.Join(args, " "), r.code, r.out)
	}
	return r.out
}

// thisPlatform is npm's name for this machine, the one binaries.sh builds by default.
func thisPlatform() string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	osName := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS]
	return osName + "-" + arch
}

// TestWheels builds this platform's wheel and the fallback one, checks their tags and
// contents, installs the platform's into a fresh virtual environment offline and uses
// it there as a pytest user would.
func TestWheels(t *testing.T) {
	py := needPython(t)
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	platform := thisPlatform()
	bins := t.TempDir()
	began := time.Now()
	must(t, root, nil, "bash", "cmd/hostemu/binaries.sh", bins, platform)
	t.Logf("cmd/hostemu/binaries.sh %s: %s", platform, time.Since(began).Round(time.Millisecond))
	semver := strings.TrimSpace(string(readFile(t, filepath.Join(bins, "VERSION"))))
	wheels := t.TempDir()
	env := []string{"HOSTEMU_BINARIES=" + bins, "PYTHON=" + py}
	began = time.Now()
	must(t, root, env, "bash", "python/build.sh", wheels)
	t.Logf("python/build.sh (packing only): %s", time.Since(began).Round(time.Millisecond))
	platformWheel, anyWheel := wheelPair(t, wheels)

	t.Run("tags and contents", func(t *testing.T) {
		version := checkWheel(t, platformWheel, filepath.Join(bins, platform, "hostemu"))
		if v := checkWheel(t, anyWheel, ""); v != version {
			t.Errorf("the wheels' versions differ: %s and %s", version, v)
		}
		if !strings.HasPrefix(semver, strings.SplitN(strings.SplitN(version, ".dev", 2)[0], "+", 2)[0]) {
			t.Errorf("wheel version %s is not hostemu's %s", version, semver)
		}
		t.Logf("%s (%.1f MB), %s (%.0f KB)", filepath.Base(platformWheel), float64(size(t, platformWheel))/1e6, filepath.Base(anyWheel), float64(size(t, anyWheel))/1e3)
	})
	t.Run("reproducible", func(t *testing.T) {
		again := t.TempDir()
		must(t, root, env, "bash", "python/build.sh", again)
		p2, a2 := wheelPair(t, again)
		for _, pair := range [][2]string{{platformWheel, p2}, {anyWheel, a2}} {
			if !bytes.Equal(readFile(t, pair[0]), readFile(t, pair[1])) {
				t.Errorf("%s: two builds from the same binaries differ", filepath.Base(pair[0]))
			}
		}
	})

	// A fresh virtual environment; pytest (and pytest-xdist, mypy where installed)
	// from the system's site-packages; hostemu from the wheel, no index.
	venv := filepath.Join(t.TempDir(), "venv")
	began = time.Now()
	must(t, root, nil, py, "-m", "venv", "--system-site-packages", venv)
	vpy := filepath.Join(venv, "bin", "python")
	must(t, root, nil, vpy, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--find-links", wheels, "hostemu")
	t.Logf("venv and pip install --no-index: %s", time.Since(began).Round(time.Millisecond))
	installed := filepath.Join(venv, "bin", "hostemu")
	if !bytes.Equal(readFile(t, installed), readFile(t, filepath.Join(bins, platform, "hostemu"))) {
		t.Fatalf("%s is not this platform's binary: pip installed the fallback wheel?", installed)
	}
	// The installed package alone: no HOSTEMU_* of this process, no source tree.
	venvEnv := []string{"HOSTEMU_BINARY=", "HOSTEMU_URL=", "HOSTEMU_ARTIFACTS=", "PYTHONDONTWRITEBYTECODE=1"}
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS("tests")); err != nil {
		t.Fatal(err)
	}

	t.Run("python -m hostemu version", func(t *testing.T) {
		for _, argv := range [][]string{{vpy, "-m", "hostemu", "version"}, {installed, "version"}} {
			out := must(t, work, venvEnv, argv[0], argv[1:]...)
			if !strings.HasPrefix(out, "hostemu v"+semver+"\n") {
				t.Errorf("%s printed %q, want hostemu v%s first", strings.Join(argv, " "), out, semver)
			}
		}
		r := runIn(t, work, venvEnv, vpy, "-m", "hostemu", "serve", "--no-such-flag")
		if r.code != 2 || !strings.Contains(r.out, "no-such-flag") {
			t.Errorf("python -m hostemu serve --no-such-flag: exit %d, want the binary's 2:\n%s", r.code, r.out)
		}
	})
	t.Run("pytest suite", func(t *testing.T) {
		r := runIn(t, work, venvEnv, vpy, "-m", "pytest", "-p", "no:cacheprovider", "suite")
		wantPassed(t, r, 10)
		t.Log(lastLines(r.out, 1))
	})
	t.Run("pytest suite on one hostemu (HOSTEMU_URL)", func(t *testing.T) {
		emu := testkit.Start(t)
		r := runIn(t, work, append(slices.Clip(venvEnv), "HOSTEMU_URL="+emu.URL()), vpy, "-m", "pytest", "-p", "no:cacheprovider", "suite")
		wantPassed(t, r, 10)
	})
	t.Run("pytest -n 2 and the coverage gate", func(t *testing.T) {
		args := []string{"-m", "pytest", "-p", "no:cacheprovider", "suite"}
		if runIn(t, work, venvEnv, vpy, "-c", "import xdist").code == 0 {
			args = append(args, "-n", "2")
		} else {
			t.Log("pytest-xdist is not installed (python3-pytest-xdist): the suite runs in one process")
		}
		r := runIn(t, work, venvEnv, vpy, append(slices.Clip(args), "--hostemu-coverage-min", "1")...)
		wantPassed(t, r, 10)
		m := regexp.MustCompile(`hostemu coverage of 9 test worlds: ([0-9.]+)% .*minimum 1%: ok`).FindStringSubmatch(r.out)
		if m == nil {
			t.Fatalf("no coverage summary of the 9 worlds:\n%s", r.out)
		}
		t.Logf("coverage of the suite: %s%%", m[1])
		r = runIn(t, work, venvEnv, vpy, append(slices.Clip(args), "--hostemu-coverage-min", "99.9")...)
		if r.code != 1 || !strings.Contains(r.out, "minimum 99.9%: FAIL") || !strings.Contains(r.out, "10 passed") {
			t.Errorf("--hostemu-coverage-min 99.9: exit %d, want 1 with its FAIL line and 10 passed:\n%s", r.code, r.out)
		}
	})
	xdist := runIn(t, work, venvEnv, vpy, "-c", "import xdist").code == 0
	t.Run("hostemu mutate's protocol (a stand-in coordinator)", func(t *testing.T) {
		mutantProtocol(t, work, venvEnv, vpy, false)
	})
	t.Run("hostemu mutate's protocol under pytest -n 2", func(t *testing.T) {
		if !xdist {
			t.Skip("pytest-xdist is not installed (python3-pytest-xdist)")
		}
		mutantProtocol(t, work, venvEnv, vpy, true)
	})
	t.Run("hostemu mutate -- python -m pytest", func(t *testing.T) {
		mutatePytest(t, work, venvEnv, vpy, installed, xdist)
	})
	t.Run("docs/python.md's example", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "test_deploy.py"), []byte(docsSnippet(t, "# test_deploy.py\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		wantPassed(t, runIn(t, dir, venvEnv, vpy, "-m", "pytest", "-p", "no:cacheprovider", "test_deploy.py"), 1)
	})
	t.Run("a failing test leaves its bundle", func(t *testing.T) {
		failingTest(t, work, venvEnv, vpy)
	})
	t.Run("a failing test leaves its bundle under pytest -n 2", func(t *testing.T) {
		if runIn(t, work, venvEnv, vpy, "-c", "import xdist").code != 0 {
			t.Skip("pytest-xdist is not installed (python3-pytest-xdist)")
		}
		failingTest(t, work, venvEnv, vpy, "-n", "2")
	})
	t.Run("failure.txt through POST /_emulator/bundle (a stand-in of the route)", func(t *testing.T) {
		// Until hostemu itself takes {"failure"} (see failingTest), a proxy in front of
		// it does: the plugin's half, the request and where the text lands, is checked.
		standIn := bundleStandIn(t, testkit.Start(t).URL())
		failingTest(t, work, append(slices.Clip(venvEnv), "HOSTEMU_URL="+standIn), vpy)
	})
	t.Run("python -m hostemu is the binary: SIGTERM stops it cleanly", func(t *testing.T) {
		execSignal(t, work, venvEnv, vpy)
	})
	t.Run("the py3-none-any wheel", func(t *testing.T) {
		fallbackWheel(t, anyWheel, vpy, filepath.Join(bins, platform), semver)
	})
	t.Run("SIGKILL of the python process ends hostemu", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("PR_SET_PDEATHSIG is Linux's")
		}
		ms := sigkill(t, work, venvEnv, vpy)
		t.Logf("start()ed hostemu gone %d ms after SIGKILL of its python (PR_SET_PDEATHSIG and the stdin pipe)", ms)
	})
	t.Run("SIGKILL: the stdin pipe alone", func(t *testing.T) {
		help := runIn(t, work, venvEnv, installed, "serve", "-h")
		if !strings.Contains(help.out, "watch-stdin") {
			t.Fatalf("hostemu serve -h does not name --watch-stdin:\n%s", help.out)
		}
		ms := sigkill(t, work, venvEnv, vpy, "pipe-only")
		t.Logf("start()ed hostemu gone %d ms after SIGKILL of its python (the stdin pipe alone)", ms)
	})
	t.Run("mypy --strict", func(t *testing.T) {
		if r := runIn(t, work, venvEnv, vpy, "-m", "mypy", "--version"); r.code != 0 {
			t.Skip("mypy is not installed (python3-mypy): the types are not checked")
		}
		out := must(t, work, venvEnv, vpy, "-m", "mypy", "--strict", "--no-incremental", "typed_example.py", "suite/conftest.py")
		t.Log(lastLines(out, 1))
		// the package's own source, as strict as its users' code
		out = must(t, ".", venvEnv, vpy, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", t.TempDir(), "hostemu")
		t.Log(lastLines(out, 1))
	})
}

// TestEveryPlatformsWheel packs every platform's wheel from stand-in binaries (cross-
// compiling five is .ci/run's job) and checks each one's name, tags and contents.
func TestEveryPlatformsWheel(t *testing.T) {
	py := needPython(t)
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bins := t.TempDir()
	want := map[string]string{
		"linux-x64":    "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
		"linux-arm64":  "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
		"darwin-x64":   "macosx_11_0_x86_64",
		"darwin-arm64": "macosx_11_0_arm64",
		"win32-x64":    "win_amd64",
	}
	for p := range want {
		name := "hostemu"
		if p == "win32-x64" {
			name += ".exe"
		}
		if err := os.MkdirAll(filepath.Join(bins, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bins, p, name), []byte("stand-in for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bins, "VERSION"), []byte("1.4.0-rc.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	must(t, root, []string{"HOSTEMU_BINARIES=" + bins, "PYTHON=" + py}, "bash", "python/build.sh", out, "all")
	for p, tags := range want {
		wheel := filepath.Join(out, "hostemu-1.4.0rc2-py3-none-"+tags+".whl")
		bin := filepath.Join(bins, p, "hostemu")
		if p == "win32-x64" {
			bin += ".exe"
		}
		t.Run(p, func(t *testing.T) { checkWheel(t, wheel, bin) })
	}
	t.Run("any", func(t *testing.T) { checkWheel(t, filepath.Join(out, "hostemu-1.4.0rc2-py3-none-any.whl"), "") })
	if all, _ := filepath.Glob(filepath.Join(out, "*.whl")); len(all) != 6 {
		t.Errorf("python/build.sh all wrote %d wheels, want 6: %v", len(all), all)
	}
}

// wantPassed fails unless pytest passed exactly n tests (exit code 5, no tests, is a
// failure here).
func wantPassed(t *testing.T, r result, n int) {
	t.Helper()
	if r.code != 0 || !regexp.MustCompile(`\b`+strconv.Itoa(n)+` passed\b`).MatchString(r.out) {
		t.Fatalf("pytest: exit code %d, want 0 with %d passed:\n%s", r.code, n, r.out)
	}
	if strings.Contains(r.out, "skipped") {
		t.Errorf("pytest skipped tests:\n%s", r.out)
	}
}

// failingTest runs tests/failing (one passing, one failing test) and checks that it
// failed and left exactly one bundle, printed with its replay command, holding the
// failing test's message in failure.txt.
func failingTest(t *testing.T, work string, env []string, vpy string, args ...string) {
	artifacts := t.TempDir()
	r := runIn(t, work, append(slices.Clip(env), "HOSTEMU_ARTIFACTS="+artifacts), vpy, append([]string{"-m", "pytest", "-p", "no:cacheprovider", "failing"}, args...)...)
	if r.code != 1 || !strings.Contains(r.out, "1 failed, 1 passed") {
		t.Fatalf("pytest failing: exit code %d, want 1 with 1 failed, 1 passed:\n%s", r.code, r.out)
	}
	const want = "failing_test_failing.py_test_fails.hostemu.tgz"
	entries, _ := os.ReadDir(artifacts)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != want {
		t.Fatalf("$HOSTEMU_ARTIFACTS holds %v, want [%s]:\n%s", names, want, r.out)
	}
	file := filepath.Join(artifacts, want)
	if !strings.Contains(r.out, "hostemu replay "+file+"\n") && !strings.Contains(r.out, "hostemu replay '"+file+"'\n") { // shlex.quote's
		t.Errorf("the output does not print the replay command for %s:\n%s", file, r.out)
	}
	// a bundle hostemu replays, failure.txt and all
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := emulator.ReadBundle(bytes.NewReader(b), 0, 0)
	if err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	if !strings.Contains(bundle.Failure(), "hostemu-failure-marker") {
		t.Errorf("the bundle read back says the test failed with %q", bundle.Failure())
	}
	if faults := bundleMember(t, file, "faults.json"); !bytes.Contains(faults, []byte("/v1/projects")) {
		t.Errorf("the bundle's faults.json does not hold the failing test's fault:\n%s", faults)
	}
	t.Run("failure.txt", func(t *testing.T) {
		text := bundleMember(t, file, "failure.txt")
		if text == nil {
			t.Fatalf("the bundle has no failure.txt:\n%s", r.out)
		}
		for _, s := range []string{"failing/test_failing.py::test_fails", "AssertionError: hostemu-failure-marker", "what the emulator said"} {
			if !bytes.Contains(text, []byte(s)) {
				t.Errorf("failure.txt does not hold %q:\n%s", s, text)
			}
		}
	})
}

// bundleStandIn is a proxy to the hostemu at upstream that answers POST
// /_emulator/[namespaces/{ns}/]bundle {"failure": text} as the route is specified: the
// world's bundle (upstream's GET) with text as its failure.txt member.
func bundleStandIn(t *testing.T, upstream string) string {
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/_emulator/") || !strings.HasSuffix(r.URL.Path, "/bundle") {
			proxy.ServeHTTP(w, r)
			return
		}
		var body struct {
			Failure string `json:"failure"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, fmt.Sprintf("want JSON {\"failure\"}: %v", err), http.StatusBadRequest)
			return
		}
		res, err := http.Get(upstream + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		gz, err := gzip.NewReader(res.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		tw := tar.NewWriter(zw)
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			_ = tw.WriteHeader(h)
			_, _ = io.Copy(tw, tr)
		}
		_ = tw.WriteHeader(&tar.Header{Name: "failure.txt", Mode: 0o644, Size: int64(len(body.Failure)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(body.Failure))
		_ = tw.Close()
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(out.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// execSignal runs `python -m hostemu serve`, which replaces itself with the binary:
// SIGTERM reaches hostemu itself, which shuts down cleanly with exit code 0.
func execSignal(t *testing.T, work string, env []string, vpy string) {
	cmd := exec.Command(vpy, "-m", "hostemu", "serve", "--addr", "127.0.0.1:0", "--tls-addr", "", "--ca-dir", ":memory:", "--log-format", "json", "--quiet")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var log []string
	for sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), `"msg":"listening"`) {
			break
		}
	}
	if len(log) == 0 || !strings.Contains(log[len(log)-1], `"msg":"listening"`) {
		t.Fatalf("python -m hostemu serve did not listen:\n%s", strings.Join(log, "\n"))
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
	if runtime.GOOS == "linux" && strings.TrimSpace(string(comm)) != "hostemu" {
		t.Errorf("python -m hostemu's process is %q, not the binary: it should exec it", strings.TrimSpace(string(comm)))
	}
	go io.Copy(io.Discard, stderr)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("python -m hostemu serve after SIGTERM: %v, want a clean exit 0", err)
	}
}

// fallbackWheel installs the py3-none-any wheel (pip install --target) and checks
// that its hostemu launcher and python -m hostemu run HOSTEMU_BINARY or a hostemu on
// PATH (never themselves), and say what to do when there is neither.
func fallbackWheel(t *testing.T, wheel, vpy, binDir, semver string) {
	target := t.TempDir()
	must(t, target, nil, vpy, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--no-deps", "--target", target, wheel)
	launcher := filepath.Join(target, "bin", "hostemu")
	if _, err := os.Stat(launcher); err != nil {
		t.Fatalf("pip install --target wrote no launcher: %v", err)
	}
	empty := t.TempDir()
	base := []string{"PYTHONPATH=" + target, "HOSTEMU_BINARY=", "PYTHONDONTWRITEBYTECODE=1"}
	cases := []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"neither", []string{"PATH=" + filepath.Join(target, "bin") + ":" + empty}, 1, "no hostemu on PATH"},
		{"HOSTEMU_BINARY", []string{"PATH=" + empty, "HOSTEMU_BINARY=" + filepath.Join(binDir, "hostemu")}, 0, "hostemu v" + semver + "\n"},
		{"PATH", []string{"PATH=" + filepath.Join(target, "bin") + ":" + binDir}, 0, "hostemu v" + semver + "\n"},
	}
	for _, c := range cases {
		for _, argv := range [][]string{{launcher, "version"}, {vpy, "-m", "hostemu", "version"}} {
			r := runIn(t, empty, append(slices.Clip(base), c.env...), argv[0], argv[1:]...)
			if r.code != c.code || !strings.Contains(r.out, c.want) {
				t.Errorf("%s, %s: exit %d, want %d and %q:\n%s", c.name, strings.Join(argv, " "), r.code, c.code, c.want, r.out)
			}
			if c.code != 0 && !strings.Contains(r.out, "HOSTEMU_BINARY") {
				t.Errorf("%s: the message does not name HOSTEMU_BINARY:\n%s", c.name, r.out)
			}
		}
	}
}

// sigkill runs tests/sigkill_child.py, which start()s a hostemu and prints its pid,
// kills the python process with SIGKILL, and returns how long the hostemu took to go
// (it fails the test beyond 2 s; the contract is 1 s).
func sigkill(t *testing.T, work string, env []string, vpy string, args ...string) int64 {
	cmd := exec.Command(vpy, append([]string{"sigkill_child.py"}, args...)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("sigkill_child.py printed no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || !alive(pid) {
		t.Fatalf("sigkill_child.py printed %q: no live hostemu", line)
	}
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for alive(pid) {
		if time.Since(killed) > 2*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("hostemu (pid %d) still runs %s after its python was killed", pid, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(10 * time.Millisecond) // polling a process that is not ours: nothing to wait on
	}
	return time.Since(killed).Milliseconds()
}

// alive tells whether pid runs (a zombie waiting for a reaper does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) S ...: the state follows the last ')'
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// wheelPair is the platform wheel and the fallback wheel of dir.
func wheelPair(t *testing.T, dir string) (string, string) {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(dir, "*.whl"))
	anyW, _ := filepath.Glob(filepath.Join(dir, "*-py3-none-any.whl"))
	if len(all) != 2 || len(anyW) != 1 {
		t.Fatalf("python/build.sh wrote %v, want this platform's wheel and the py3-none-any one", all)
	}
	for _, w := range all {
		if w != anyW[0] {
			return w, anyW[0]
		}
	}
	return "", ""
}

// checkWheel checks one wheel's name, tags, metadata and RECORD, and that it holds the
// binary (or, for the fallback wheel, none and a launcher); it returns its version.
func checkWheel(t *testing.T, path, binary string) string {
	t.Helper()
	m := regexp.MustCompile(`^hostemu-([^-]+)-py3-none-([a-z0-9_.]+)\.whl$`).FindStringSubmatch(filepath.Base(path))
	if m == nil {
		t.Fatalf("%s: not a wheel name of hostemu", filepath.Base(path))
	}
	version, tags := m[1], strings.Split(m[2], ".")
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	members := map[string][]byte{}
	var names []string
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		members[f.Name] = data
		names = append(names, f.Name)
		mode := f.Mode().Perm()
		wantMode := os.FileMode(0o644)
		if strings.Contains(f.Name, ".data/scripts/") {
			wantMode = 0o755
		}
		if mode != wantMode || f.Mode()&os.ModeType != 0 {
			t.Errorf("%s: mode %v, want %v", f.Name, mode, wantMode)
		}
		if !f.Modified.Equal(z.File[0].Modified) {
			t.Errorf("%s: its time differs from the first member's", f.Name)
		}
	}
	dist := "hostemu-" + version + ".dist-info/"
	if !slices.IsSorted(names[:len(names)-5]) || names[len(names)-1] != dist+"RECORD" {
		t.Errorf("members are not sorted with the .dist-info last and RECORD at the end: %v", names)
	}
	for _, want := range []string{"hostemu/__init__.py", "hostemu/__main__.py", "hostemu/testkit.py", "hostemu/pytest_plugin.py", "hostemu/_types.py", "hostemu/py.typed", "hostemu/_build.py", dist + "METADATA", dist + "WHEEL", dist + "entry_points.txt"} {
		if members[want] == nil {
			t.Errorf("no %s among %v", want, names)
		}
	}
	// WHEEL: one Tag line per tag of the name, purelib only without a binary.
	var gotTags []string
	for _, l := range strings.Split(string(members[dist+"WHEEL"]), "\n") {
		if tag, ok := strings.CutPrefix(l, "Tag: "); ok {
			gotTags = append(gotTags, tag)
		}
	}
	var wantTags []string
	for _, p := range tags {
		wantTags = append(wantTags, "py3-none-"+p)
	}
	if !slices.Equal(gotTags, wantTags) {
		t.Errorf("WHEEL tags %v, the name's %v", gotTags, wantTags)
	}
	purelib := strings.Contains(string(members[dist+"WHEEL"]), "Root-Is-Purelib: true")
	if purelib != (binary == "") {
		t.Errorf("WHEEL: Root-Is-Purelib is %v for a wheel with binary %q", purelib, binary)
	}
	if !strings.Contains(string(members[dist+"METADATA"]), "\nVersion: "+version+"\n") {
		t.Errorf("METADATA does not say Version: %s", version)
	}
	// RECORD: every member but itself, each with its sha256 and size.
	recorded := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(members[dist+"RECORD"])), "\n") {
		parts := strings.Split(l, ",")
		if len(parts) != 3 {
			t.Fatalf("RECORD line %q", l)
		}
		recorded[parts[0]] = true
		if parts[0] == dist+"RECORD" {
			continue
		}
		data, ok := members[parts[0]]
		if !ok {
			t.Errorf("RECORD names %s, which the wheel lacks", parts[0])
			continue
		}
		sum := sha256.Sum256(data)
		if want := "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:]); parts[1] != want || parts[2] != strconv.Itoa(len(data)) {
			t.Errorf("RECORD %s: %s,%s, want %s,%d", parts[0], parts[1], parts[2], want, len(data))
		}
	}
	for _, n := range names {
		if !recorded[n] {
			t.Errorf("%s is not in RECORD", n)
		}
	}
	ep := string(members[dist+"entry_points.txt"])
	if !strings.Contains(ep, "[pytest11]\nhostemu = hostemu.pytest_plugin\n") {
		t.Errorf("entry_points.txt has no pytest11 plugin:\n%s", ep)
	}
	script := "hostemu-" + version + ".data/scripts/" + filepath.Base(binary)
	if binary == "" {
		script = "hostemu-" + version + ".data/scripts/hostemu"
	}
	if binary != "" {
		if !bytes.Equal(members[script], readFile(t, binary)) {
			t.Errorf("%s is not the binary %s", script, binary)
		}
		if strings.Contains(ep, "console_scripts") {
			t.Errorf("a platform wheel's hostemu is its binary, but entry_points.txt has a console script too:\n%s", ep)
		}
	} else {
		if members[script] != nil {
			t.Errorf("the fallback wheel holds a binary")
		}
		if !strings.Contains(ep, "[console_scripts]\nhostemu = hostemu.__main__:main\n") {
			t.Errorf("the fallback wheel has no hostemu launcher:\n%s", ep)
		}
	}
	if !bytes.Contains(members["hostemu/_build.py"], []byte(fmt.Sprintf("BUNDLED = %s", map[bool]string{true: "True", false: "False"}[binary != ""]))) {
		t.Errorf("_build.py does not say whether the binary is bundled:\n%s", members["hostemu/_build.py"])
	}
	return version
}

// bundleMember is one member of a bundle (a gzipped tar), nil when it has none.
func bundleMember(t *testing.T, file, member string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == member {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// docsSnippet is the python code block of docs/python.md whose text starts with first.
func docsSnippet(t *testing.T, first string) string {
	t.Helper()
	doc := string(readFile(t, filepath.Join("..", "docs", "python.md")))
	_, after, ok := strings.Cut(doc, "```python\n"+first)
	if !ok {
		t.Fatalf("docs/python.md has no python block starting %q", first)
	}
	block, _, ok := strings.Cut(first+after, "```")
	if !ok {
		t.Fatalf("docs/python.md: the block starting %q does not end", first)
	}
	return block
}

// lastLines is the last n lines of s, for a summary in the log.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
