// Package npm_test checks hostemu's npm packages as a user gets them: npm/build.sh packs
// them, npm installs the tarballs offline into an empty project, and the project runs
// `npx hostemu`, the testkit's node:test suites (npm/e2e) and tsc over the types.
package npm_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// The tools the test installs once into the user's cache directory (see npmTools).
const (
	// typescriptVersion is the tsc that checks the types, the one .ci/openapi-check pins.
	typescriptVersion = "5.9.3"
	// typesNodeVersion is the @types/node the types are checked beside, as most Node
	// projects have it.
	typesNodeVersion  = "20.19.43"
	vitestVersion     = "3.2.7"
	jestVersion       = "30.5.2"
	playwrightVersion = "1.65.1"
)

// needNode skips the test without node and npm, which the packages are for.
func needNode(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("npm packages: skipped with -short (builds hostemu and runs node)")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("npm packages: no %s on PATH", tool)
		}
	}
}

// run runs name args in dir and returns its stdout; a failure stops the test with both
// outputs.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// failureBundles runs a suite of npm/e2e/failing, one passing and one failing test under
// saveBundlesOnFailure, and checks that it failed and left exactly one bundle, want,
// printed with its replay command, holding the deployment the failing test made and,
// in failure.txt, the runner's assertion message (failure).
func failureBundles(t *testing.T, dir string, env []string, want, failure string, name string, args ...string) {
	t.Helper()
	artifacts := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "HOSTEMU_ARTIFACTS="+artifacts)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s %s passed; its failing test should fail it:\n%s", name, strings.Join(args, " "), out)
	}
	entries, _ := os.ReadDir(artifacts)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != want {
		t.Fatalf("%s %s left %v in $HOSTEMU_ARTIFACTS, want [%s]:\n%s", name, strings.Join(args, " "), names, want, out)
	}
	file := filepath.Join(artifacts, want)
	if !strings.Contains(string(out), "npx hostemu replay "+strconv.Quote(file)) {
		t.Errorf("the output does not print the replay command for %s:\n%s", file, out)
	}
	id := regexp.MustCompile(`deployed (dpl_[a-z0-9]+)`).FindSubmatch(out)
	if id == nil {
		t.Fatalf("the failing test printed no deployment:\n%s", out)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := emulator.ReadBundle(f, 0, 0); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	if state := bundleMember(t, file, "state.json"); !bytes.Contains(state, id[1]) {
		t.Errorf("%s: its state.json does not hold the failing test's deployment %s", want, id[1])
	}
	// #33: why it failed, as the runner said
	if got := string(bundleMember(t, file, "failure.txt")); !strings.Contains(got, "a failing test failed:") || !strings.Contains(got, failure) {
		t.Errorf("%s: failure.txt does not hold the assertion message %q:\n%s", want, failure, got)
	}
}

// bundleMember is one member of a bundle (a gzipped tar).
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
		if err != nil {
			t.Fatalf("%s: no %s (%v)", file, member, err)
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

// TestLauncher runs the launcher's and platform resolution's own tests, which need no
// build: fake binaries stand in for hostemu.
func TestLauncher(t *testing.T) {
	needNode(t)
	t.Parallel()
	out := run(t, ".", nil, "node", "--test", "hostemu/test/")
	t.Log(lastLines(out, 8))
}

// TestPackages builds the packages for this machine's platform, installs them offline
// in an empty project and uses them there as a user would.
func TestPackages(t *testing.T) {
	needNode(t)
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tarballs := t.TempDir()
	run(t, root, nil, "bash", "npm/build.sh", tarballs)
	tgz, err := filepath.Glob(filepath.Join(tarballs, "*.tgz"))
	if err != nil || len(tgz) != 2 {
		t.Fatalf("npm/build.sh wrote %v (%v), want the hostemu package and this platform's", tgz, err)
	}
	var size int64
	for _, f := range tgz {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	// hostemu-VERSION.tgz; the platform packages' are hostemu-linux-x64-VERSION.tgz…
	mainPkg, _ := filepath.Glob(filepath.Join(tarballs, "hostemu-[0-9]*.tgz"))
	if len(mainPkg) != 1 {
		t.Fatalf("no hostemu-VERSION.tgz among %v", tgz)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(mainPkg[0]), "hostemu-"), ".tgz")

	// An empty project, an npm cache of its own: nothing may come from the registry.
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, "package.json"), []byte(`{"name":"npm-test","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	npmEnv := []string{"npm_config_cache=" + t.TempDir(), "npm_config_update_notifier=false"}
	began := time.Now()
	run(t, proj, npmEnv, "npm", append([]string{"install", "--offline", "--no-audit", "--no-fund"}, tgz...)...)
	t.Logf("npm install --offline of %d tarballs (%.1f MB): %s", len(tgz), float64(size)/1e6, time.Since(began).Round(time.Millisecond))

	t.Run("npx hostemu version", func(t *testing.T) {
		out := run(t, proj, npmEnv, "npx", "--no-install", "hostemu", "version")
		if !strings.HasPrefix(out, "hostemu v"+v+"\n") {
			t.Errorf("npx hostemu version printed %q, want hostemu v%s first", out, v)
		}
	})

	if err := os.CopyFS(proj, os.DirFS("e2e")); err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clip(npmEnv), "HOSTEMU_BINARY=") // the installed platform package's binary
	t.Run("node --test", func(t *testing.T) {
		out := run(t, proj, env, "node", "--test", "testkit.test.mjs", "require.test.cjs", "exit.test.mjs", "command.test.mjs", "orphan.test.mjs", "coverage.test.mjs", "mutant.test.mjs")
		t.Log(lastLines(out, 8))
	})
	t.Run("node:test failure bundles", func(t *testing.T) {
		failureBundles(t, proj, env, "a_failing_test.hostemu.tgz", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:" /* then a diff, worded by Node's version */, "node", "--test", "failing/node.test.mjs")
	})
	t.Run("start() to healthy", func(t *testing.T) {
		var r struct {
			Runs   int     `json:"runs"`
			Median float64 `json:"median_ms"`
			Min    float64 `json:"min_ms"`
			P90    float64 `json:"p90_ms"`
		}
		out := run(t, proj, env, "node", "bench-start.mjs", "20")
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("bench-start.mjs printed %q: %v", out, err)
		}
		t.Logf("start() to healthy over %d runs: median %.1f ms (min %.1f, p90 %.1f)", r.Runs, r.Median, r.Min, r.P90)
	})
	t.Run("vitest and jest", func(t *testing.T) {
		nm := npmTools(t, "vitest@"+vitestVersion, "jest@"+jestVersion)
		link(t, nm, proj, "vitest", "jest")
		out := run(t, proj, env, "node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", "runners", "vitest.test.mjs")
		t.Log(lastLines(out, 4))
		run(t, proj, env, "node", filepath.Join("node_modules", "jest", "bin", "jest.js"), "--rootDir", "runners", "jest.test.cjs")
		failureBundles(t, proj, env, "bundles_a_failing_test.hostemu.tgz", "expected 'ready' to be 'error'", "node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", "failing", "vitest.test.mjs")
		failureBundles(t, proj, env, "bundles_a_failing_test.hostemu.tgz", `Received: "ready"`, "node", filepath.Join("node_modules", "jest", "bin", "jest.js"), "--rootDir", "failing", "jest.test.cjs")

		// docs/npm.md's Vitest recipes as they stand, with a stand-in for the client
		// under test that they import.
		files := map[string]string{
			"package.json":          `{"type":"module"}`,
			"vitest.config.js":      docsSnippet(t, "import { defineConfig } from \"vitest/config\";\n"),
			"test/hostemu.setup.js": docsSnippet(t, "// test/hostemu.setup.js"),
			"test/deploy.test.js":   docsSnippet(t, "// test/deploy.test.js\n"),
			"test/start.test.js":    docsSnippet(t, "import { expect, test } from \"vitest\";\nimport { start }"),
			"src/hosting.js":        vitestDocClient,
		}
		for name, text := range files {
			f := filepath.Join(proj, "vitest-docs", name)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out = run(t, proj, env, "node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", "vitest-docs")
		t.Log(lastLines(out, 4))

		// docs/npm.md's coverage of a run: collectedCoverage() in a globalSetup's
		// teardown adds up the worlds of two test files, each run by a worker of its own
		files = map[string]string{
			"package.json":             `{"type":"module"}`,
			"vitest.config.js":         `export default { test: { globalSetup: ["./test/coverage.setup.js"] } };`,
			"test/coverage.setup.js":   docsSnippet(t, "// test/coverage.setup.js"),
			"test/projects.test.js":    coverageDocTest("lists projects", "/v1/projects"),
			"test/deployments.test.js": coverageDocTest("lists deployments", "/v1/deployments"),
		}
		for name, text := range files {
			f := filepath.Join(proj, "vitest-coverage", name)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out = run(t, proj, env, "node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", "vitest-coverage")
		m := regexp.MustCompile(`hostemu: the tests exercised ([0-9.]+)% of the API`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the coverage setup printed no total:\n%s", out)
		}
		never := regexp.MustCompile(`hostemu: never called: (.*)`).FindStringSubmatch(out)
		for _, op := range []string{"GET /v1/projects,", "GET /v1/deployments,"} {
			if never != nil && strings.Contains(never[1]+",", op) {
				t.Errorf("collectedCoverage() says %s was never called, though a test file called it:\n%s", strings.TrimSuffix(op, ","), out)
			}
		}
		t.Logf("collectedCoverage() over two Vitest workers' worlds: %s%%", m[1])
	})
	t.Run("hostemu mutate", func(t *testing.T) {
		nm := npmTools(t, "vitest@"+vitestVersion, "jest@"+jestVersion)
		link(t, nm, proj, "vitest", "jest")
		for _, tc := range []struct {
			runner string
			cmd    []string
			test   string // the prefix of the tests' names in the report
		}{
			{"vitest", []string{"node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", filepath.Join("mutate", "vitest")}, "mutate/vitest/client.test.mjs > client "},
			{"jest", []string{"node", filepath.Join("node_modules", "jest", "bin", "jest.js"), "--rootDir", filepath.Join("mutate", "jest")}, "mutate/jest/client.test.cjs > client "},
			{"node", []string{"node", "--test", filepath.Join("mutate", "node", "client.test.mjs")}, "client > "},
		} {
			t.Run(tc.runner, func(t *testing.T) {
				mutateJS(t, proj, env, tc.runner, tc.test, tc.cmd)
			})
		}
		// the figure for Vitest (docs/performance.md): twelve tests, 156 mutants,
		// the whole run against its baseline; a minute or two, so only when asked
		t.Run("twelve Vitest tests", func(t *testing.T) {
			if os.Getenv("HOSTEMU_MUTATE_BENCH") == "" {
				t.Skip("set HOSTEMU_MUTATE_BENCH=1 to measure a mutation run of a twelve-test Vitest suite")
			}
			mutateBench(t, proj, env, "node", filepath.Join("node_modules", "vitest", "vitest.mjs"), "run", "--root", filepath.Join("mutate", "suite12"))
		})
	})
	t.Run("playwright (docs/npm.md)", func(t *testing.T) {
		chromium := findChromium()
		if chromium == "" {
			t.Skip("no Chromium (chromium, chromium-browser or HOSTEMU_CHROMIUM): the Playwright example is not run")
		}
		nm := npmTools(t, "@playwright/test@"+playwrightVersion)
		link(t, nm, proj, "@playwright", "playwright", "playwright-core")
		spec := docsSnippet(t, "// e2e/deploy.spec.js\n")
		dir := filepath.Join(proj, "pw")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		config := fmt.Sprintf(`export default { testDir: ".", testMatch: "*.spec.mjs", use: { launchOptions: { executablePath: %q, args: ["--no-sandbox"] } } };`, chromium)
		for name, text := range map[string]string{"deploy.spec.mjs": spec, "playwright.config.mjs": config} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := run(t, proj, env, "node", filepath.Join("node_modules", "@playwright", "test", "cli.js"), "test", "-c", filepath.Join("pw", "playwright.config.mjs"))
		t.Log(lastLines(out, 3))
	})
	t.Run("tsc --strict", func(t *testing.T) {
		tsc := filepath.Join(npmTools(t, "typescript@"+typescriptVersion), "typescript", "bin", "tsc")
		run(t, proj, env, "node", tsc, "--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext",
			"--target", "es2022", "types.ts", "types.cts")
		// as a bundler-based project (Vite, Vitest) resolves it
		run(t, proj, env, "node", tsc, "--strict", "--noEmit", "--module", "esnext", "--moduleResolution", "bundler",
			"--target", "es2022", "types.ts")
		// `await using emu = await start()` (TS2851 before the type had [Symbol.asyncDispose])
		run(t, proj, env, "node", tsc, "--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext",
			"--target", "es2022", "--lib", "es2022,esnext.disposable", "dispose.ts", "types.ts", "types.cts")
		// beside @types/node, which declares Symbol.asyncDispose as the types do
		nodeTypes := filepath.Join(npmTools(t, "@types/node@"+typesNodeVersion), "@types")
		run(t, proj, env, "node", tsc, "--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext",
			"--target", "es2022", "--typeRoots", nodeTypes, "--types", "node", "dispose.ts", "types.ts", "types.cts")
	})
}

// mutateJS runs `npx hostemu mutate` over npm/e2e/mutate's suite for runner (cmd): the
// mutants of the client's call that swallows its errors survive, those of the one that
// throws them are killed, a second run gives the same report, --min says under or not,
// and a failing baseline is exit 2 with its output's end.
func mutateJS(t *testing.T, proj string, env []string, runner, test string, cmd []string) {
	t.Helper()
	mutate := func(extra []string, args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "npx", append([]string{"--no-install", "hostemu", "mutate", "--codes", "service_unavailable,reset", "--parallel", "2"}, args...)...)
		c.Dir = proj
		c.Env = append(append(os.Environ(), env...), extra...)
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("npx hostemu mutate: %v\n%s", err, stderr.String())
		}
		return code, stdout.String(), stderr.String()
	}
	type report struct {
		Score   float64 `json:"score"`
		Mutants []struct {
			Test, Operation, Code, Result string
		} `json:"mutants"`
		Baseline struct {
			Runner     string `json:"runner"`
			Passed     bool   `json:"passed"`
			Tests      int    `json:"tests"`
			WithWorlds int    `json:"with_worlds"`
		} `json:"baseline"`
	}
	results := func(out string) ([]string, report) {
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("the JSON report: %v\n%s", err, out)
		}
		var lines []string
		for _, m := range r.Mutants {
			lines = append(lines, fmt.Sprintf("%s | %s %s: %s", m.Test, m.Operation, m.Code, m.Result))
		}
		return lines, r
	}
	args := append([]string{"--format", "json", "--min", "50", "--"}, cmd...)
	began := time.Now()
	code, out, errOut := mutate(nil, args...)
	if code != 0 {
		t.Fatalf("hostemu mutate -- %s: exit %d\n%s\n%s", strings.Join(cmd, " "), code, out, errOut)
	}
	took := time.Since(began)
	got, r := results(out)
	want := []string{
		test + "counts projects | listProjects service_unavailable: survived",
		test + "counts projects | listProjects reset: survived",
		test + "creates a deployment | createDeployment service_unavailable: killed",
		test + "creates a deployment | createDeployment reset: killed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), errOut)
	}
	if r.Score != 0.5 || r.Baseline.Runner != runner || !r.Baseline.Passed || r.Baseline.Tests != 2 || r.Baseline.WithWorlds != 2 {
		t.Errorf("score %v, baseline %+v", r.Score, r.Baseline)
	}
	t.Logf("hostemu mutate -- %s: %d mutants in %s", strings.Join(cmd, " "), len(got), took.Round(time.Millisecond))

	// the same suite: the same report; under --min, exit 1
	args[3] = "51"
	code, out, errOut = mutate(nil, args...)
	if code != 1 || !strings.Contains(errOut, "under --min 51%") {
		t.Errorf("--min 51: exit %d, want 1\n%s", code, errOut)
	}
	if again, _ := results(out); !slices.Equal(again, got) {
		t.Errorf("a second run's mutants:\n%s\nthe first's\n%s", strings.Join(again, "\n"), strings.Join(got, "\n"))
	}

	// a failing baseline: exit 2, its output's end, no report
	code, out, errOut = mutate([]string{"MUTATE_FAIL=1"}, append([]string{"--"}, cmd...)...)
	if code != 2 || !strings.Contains(errOut, "the baseline failed") || !strings.Contains(errOut, "MUTATE_FAIL is set") || out != "" {
		t.Errorf("a failing baseline: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// mutateBench runs `npx hostemu mutate` over a suite (cmd) and logs its figures: mutants,
// runs, the baseline's time and the whole run's, and their ratio.
func mutateBench(t *testing.T, proj string, env []string, cmd ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "npx", append([]string{"--no-install", "hostemu", "mutate", "--format", "json", "--quiet", "--"}, cmd...)...)
	c.Dir = proj
	c.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("hostemu mutate -- %s: %v\n%s", strings.Join(cmd, " "), err, stderr.String())
	}
	var r struct {
		Score   float64 `json:"score"`
		Mutants []struct {
			Result string `json:"result"`
		} `json:"mutants"`
		Runs       int   `json:"runs"`
		DurationMS int64 `json:"duration_ms"`
		Baseline   struct {
			DurationMS int64 `json:"duration_ms"`
		} `json:"baseline"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, stdout.String())
	}
	if len(r.Mutants) < 150 {
		t.Errorf("%d mutants, want at least 150", len(r.Mutants))
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("hostemu mutate -- %s: %d mutants (score %.1f%%), %d runs after the baseline; baseline %.1f s, in all %.1f s: %.1f× the baseline (load average %s)",
		strings.Join(cmd, " "), len(r.Mutants), r.Score*100, r.Runs, float64(r.Baseline.DurationMS)/1000, float64(r.DurationMS)/1000,
		float64(r.DurationMS)/float64(r.Baseline.DurationMS), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}

// npmTools installs packages (name@version) once into a directory of the user's cache
// named after them, reused by later runs, and returns its node_modules; the test skips
// when they are not there and npm cannot install them (no registry).
func npmTools(t *testing.T, packages ...string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for %v: %v", packages, err)
	}
	dir := filepath.Join(cache, "hostemu", "npm-test", strings.NewReplacer("@", "", "/", "-").Replace(strings.Join(packages, "_")))
	nm := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
		return nm
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Skipf("npm tools cache: %v", err)
	}
	// Install beside it and rename, so that a concurrent run never sees half of it.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Skipf("npm tools cache: %v", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp}, packages...)
	if out, err := exec.CommandContext(ctx, "npm", args...).CombinedOutput(); err != nil {
		t.Skipf("%v are not in %s and npm cannot install them (offline?): %v\n%s", packages, dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, "installed"), nil, 0o644); err != nil {
		t.Skipf("npm tools cache: %v", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "installed")); serr != nil {
			t.Skipf("npm tools cache: %v", err)
		}
	}
	return nm
}

// link makes the packages names of node_modules nm resolvable from project proj.
func link(t *testing.T, nm, proj string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(nm, n), filepath.Join(proj, "node_modules", n)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// vitestDocClient stands in for the client under test of docs/npm.md's Vitest recipe:
// it retries a deployment answered 503.
const vitestDocClient = `export function createClient(base, token) {
  return {
    async deploy(project) {
      for (let i = 0; ; i++) {
        const res = await fetch(base + "/deployments", {
          method: "POST",
          headers: { authorization: "Bearer " + token, "content-type": "application/json" },
          body: JSON.stringify({ project_id: project, files: {} }),
        });
        if (res.status !== 503 || i === 3) return res.json();
      }
    },
  };
}
`

// coverageDocTest is a Vitest test file that starts a hostemu and calls GET path once.
func coverageDocTest(name, path string) string {
	return `import { expect, test } from "vitest";
import { start } from "hostemu/testkit";

test("` + name + `", async ({ onTestFinished }) => {
  const emu = await start();
  onTestFinished(() => emu.close());
  const res = await fetch(emu.url + "` + path + `", { headers: { authorization: "Bearer " + emu.tokens.read } });
  expect(res.status).toBe(200);
});
`
}

// findChromium is the Chromium the dashboard's browser tests use too: HOSTEMU_CHROMIUM,
// else chromium or chromium-browser on PATH; "" if none.
func findChromium() string {
	if c := os.Getenv("HOSTEMU_CHROMIUM"); c != "" {
		return c
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// docsSnippet is the js code block of docs/npm.md whose text starts with first.
func docsSnippet(t *testing.T, first string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "npm.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "```js\n"+first)
	if !ok {
		t.Fatalf("docs/npm.md has no js block starting %q", first)
	}
	block, _, ok := strings.Cut(first+after, "```")
	if !ok {
		t.Fatalf("docs/npm.md: the block starting %q does not end", first)
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
