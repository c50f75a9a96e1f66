package mutate

import (
	"path/filepath"
	"slices"
	"strings"
)

// vitest runs a Vitest suite: `vitest`, `vitest run`, `npx vitest run`, `node
// node_modules/vitest/vitest.mjs run`, `pnpm vitest`… Its testkit tells each world's
// test (the worker's current task) and file, so one run of the suite tries a mutant per
// test.
type vitest struct{}

func init() {
	register("vitest", func(argv []string) bool { return programIs(argv, "vitest") }, func() Runner { return vitest{} })
}

// vitestReport is the json reporter's file in a run's directory.
const vitestReport = "vitest.json"

func (vitest) Name() string { return "vitest" }

// Key is the test's file and full name (fileKey), as the json reporter's testResults[].name
// and assertionResults[].fullName give them.
func (vitest) Key(h Hello) string { return fileKey(h) }

func (vitest) Alone() bool { return false }

// Command runs the suite once (`run`, never watch mode) without code coverage, adds the
// json reporter, writing to dir, beside the default one (or the reporters the command
// names) and, for only, Vitest's own filters: -t with a pattern that matches exactly
// those full names, and the files. A test of the same full name in another file, or in
// a file the command's own filters name, runs too: its worlds say which test they are,
// and get no mutant of another's.
func (vitest) Command(argv []string, dir string, only []string) ([]string, error) {
	out := slices.Clone(argv)
	if i := wordIndex(out, "vitest"); i >= 0 {
		next := ""
		if i+1 < len(out) {
			next = out[i+1]
		}
		switch next {
		case "run", "related":
		case "watch", "dev":
			out[i+1] = "run"
		default:
			out = slices.Insert(out, i+1, "run")
		}
	}
	var add []string
	if !hasFlag(argv, "--reporter") {
		add = append(add, "--reporter=default")
	}
	// code coverage: nothing mutate reads, and time (or thresholds) in every run
	add = append(add, "--reporter=json", "--outputFile.json="+filepath.Join(dir, vitestReport), "--coverage.enabled=false")
	if only != nil {
		files, names, err := sortedFiles(only)
		if err != nil {
			return nil, err
		}
		add = append(add, "--testNamePattern="+namePattern(names))
		add = append(add, files...)
	}
	return appendArgs(out, add...), nil
}

// Results reads the json reporter's file. A passed test's output is what it printed, as
// the default reporter shows it in the run's output ("stdout | FILE > describe > title"
// and the lines after it), under a line saying it passed.
func (vitest) Results(dir string, output []byte) (map[string]Outcome, error) {
	return jsonResults(filepath.Join(dir, vitestReport), func(file string, names []string) string {
		return "✓ " + strings.Join(names, " > ") + " passed\n" + vitestPrinted(output, file, names)
	})
}

// vitestPrinted is what the test of file and names printed, from Vitest's default
// reporter's blocks in output: a "stdout | " or "stderr | " line naming the test by its
// file (relative to Vitest's root) and its names joined by " > ", the lines it printed,
// a blank line.
func vitestPrinted(output []byte, file string, names []string) string {
	suffix := " > " + strings.Join(names, " > ")
	var b strings.Builder
	in := false
	for line := range strings.Lines(string(output)) {
		text := strings.TrimRight(line, "\r\n")
		if in {
			if text == "" {
				in = false
				b.WriteString("\n")
				continue
			}
			b.WriteString(line)
			continue
		}
		head, ok := strings.CutPrefix(text, "stdout | ")
		if !ok {
			head, ok = strings.CutPrefix(text, "stderr | ")
		}
		if !ok || !strings.HasSuffix(head, suffix) {
			continue
		}
		rel := strings.TrimSuffix(head, suffix)
		if rel == "" || !strings.HasSuffix(filepath.ToSlash(file), "/"+strings.TrimPrefix(rel, "./")) {
			continue
		}
		in = true
		b.WriteString(line)
	}
	return b.String()
}
