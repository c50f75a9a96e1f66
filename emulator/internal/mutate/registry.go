package mutate

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// runnerEntry is one runner mutate knows: its name, how it recognises a command, and
// how to make it.
type runnerEntry struct {
	name   string
	detect func(argv []string) bool
	make   func() Runner
}

var registry []runnerEntry

// register adds a runner; each runner's file registers itself in an init. Detection is
// tried in name order.
func register(name string, detect func(argv []string) bool, mk func() Runner) {
	registry = append(registry, runnerEntry{name, detect, mk})
	sort.Slice(registry, func(i, j int) bool { return registry[i].name < registry[j].name })
}

// RunnerNames are the names --runner accepts.
func RunnerNames() []string {
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = e.name
	}
	return names
}

// FindRunner is the runner named (when name is not "") or the one that recognises argv.
func FindRunner(name string, argv []string) (Runner, error) {
	if name != "" {
		for _, e := range registry {
			if e.name == name {
				return e.make(), nil
			}
		}
		return nil, fmt.Errorf("--runner %q is not a runner mutate knows (%s)%s", name, strings.Join(RunnerNames(), ", "), yamlcheck.Suggest(name, RunnerNames()))
	}
	for _, e := range registry {
		if e.detect(argv) {
			return e.make(), nil
		}
	}
	return nil, fmt.Errorf("mutate cannot tell the test runner of %q: name it with --runner (%s)", strings.Join(argv, " "), strings.Join(RunnerNames(), ", "))
}

// words are argv's words as a runner detector compares them: each program's base name
// without .cmd/.exe/.js/.mjs/.cjs (node_modules/.bin/vitest, vitest.mjs and npx vitest
// all say "vitest").
func words(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		b := filepath.Base(a)
		if i := strings.LastIndexByte(b, '\\'); i >= 0 { // node_modules\.bin\jest.cmd, on any system
			b = b[i+1:]
		}
		for _, ext := range []string{".cmd", ".exe", ".mjs", ".cjs", ".js"} {
			b = strings.TrimSuffix(b, ext)
		}
		out[i] = b
	}
	return out
}

// hasWord reports whether one of argv's words (see words) is w.
func hasWord(argv []string, w string) bool {
	for _, x := range words(argv) {
		if x == w {
			return true
		}
	}
	return false
}

// launchers are words that start another program: a runner's name after them is the
// program's (npx vitest, pnpm exec jest, node node_modules/vitest/vitest.mjs).
var launchers = map[string]bool{"npx": true, "pnpm": true, "yarn": true, "bunx": true, "bun": true, "node": true,
	"exec": true, "run": true, "dlx": true, "env": true, "--": true}

// programIs reports whether the program argv runs is w: its first word that is not a
// launcher, a flag or an environment assignment (X=1). `python -m pytest tests/jest` is
// python's, not jest's.
func programIs(argv []string, w string) bool {
	for _, x := range words(argv) {
		switch {
		case launchers[x], strings.HasPrefix(x, "-"), strings.Contains(x, "=") && !strings.HasPrefix(x, "="):
			continue
		}
		return x == w
	}
	return false
}
