package mutate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
)

// (Not runner_js.go: a _js suffix would build it for GOOS=js only.)
//
// What the JavaScript runners (runner_vitest.go, runner_jest.go, runner_node.go) share:
// the key of a test whose file the testkit knows, the JSON report Vitest and Jest both
// write (Vitest's json reporter copies Jest's shape), and the editing of a command line
// that may go through npm.

// maxFailure bounds the failure messages one outcome keeps.
const maxFailure = 16 << 10

// fileKey is the key of a test of a runner whose testkit tells the test file: the file's
// path relative to the working directory (where hostemu mutate runs the command), " > ",
// the test's full name (its describe blocks and its title, joined by spaces), as
// "test/client.test.js > deploy retries on 503". The hello's file and the report's are
// both absolute, and made relative alike; splitFileKey makes it absolute again.
func fileKey(h Hello) string {
	if h.Test == "" || h.File == "" {
		return ""
	}
	return relFile(h.File) + fileSep + h.Test
}

// fileSep parts a test's file from its name in its key.
const fileSep = " > "

// relFile is file relative to the working directory when it is absolute and that can be
// said, else file.
func relFile(file string) string {
	if !filepath.IsAbs(file) {
		return file
	}
	wd, err := os.Getwd()
	if err != nil {
		return file
	}
	rel, err := filepath.Rel(wd, file)
	if err != nil {
		return file
	}
	return filepath.ToSlash(rel)
}

// splitFileKey is fileKey's file, absolute, and name. A test's name may hold " > ", and
// so may a directory's: the file is the shortest prefix before a " > " that names a
// file there is; when none does (the file is gone), the part before the first.
func splitFileKey(key string) (file, name string, err error) {
	file, name, ok := strings.Cut(key, fileSep)
	for at := 0; ok; {
		i := strings.Index(key[at:], fileSep)
		if i < 0 {
			break
		}
		if st, err := os.Stat(filepath.FromSlash(key[:at+i])); err == nil && st.Mode().IsRegular() {
			file, name = key[:at+i], key[at+i+len(fileSep):]
			break
		}
		at += i + len(fileSep)
	}
	if !ok || file == "" || name == "" {
		return "", "", fmt.Errorf("%q is not a test of this runner (FILE > NAME)", key)
	}
	abs, err := filepath.Abs(filepath.FromSlash(file))
	if err != nil {
		return "", "", err
	}
	return abs, name, nil
}

// readReport reads a report file: nil, nil when there is none (the run ended before
// writing it: killed, or crashed).
func readReport(file string) ([]byte, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxReport {
		return nil, fmt.Errorf("%s is over %d MiB", file, maxReport>>20)
	}
	// one buffer of the file's size: what the run is charged for it (reportBytes)
	return readFirst(f, fi.Size())
}

// jsonReport is the part of Jest's --json report, and of Vitest's json reporter's, that
// tells each test's outcome.
type jsonReport struct {
	TestResults []struct {
		Name             string `json:"name"` // the test file's absolute path
		AssertionResults []struct {
			AncestorTitles  []string `json:"ancestorTitles"`
			Title           string   `json:"title"`
			FullName        string   `json:"fullName"`
			Status          string   `json:"status"`
			FailureMessages []string `json:"failureMessages"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// jsonResults reads a Jest-shaped JSON report into outcomes by fileKey. Only tests that
// ran are there (passed or failed; not skipped, todo or pending); a test whose file and
// full name are another's too (two tests of one name) failed when either did. A failed
// test's output is its failure messages; a passed one's, what passed gives for its file
// and names (its describe blocks' and its own), the report holding none.
func jsonResults(file string, passed func(file string, names []string) string) (map[string]Outcome, error) {
	data, err := readReport(file)
	if data == nil || err != nil {
		return map[string]Outcome{}, err
	}
	out, err := parseJSONReport(data, passed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// parseJSONReport is jsonResults of a report's bytes.
func parseJSONReport(data []byte, passed func(file string, names []string) string) (map[string]Outcome, error) {
	var rep jsonReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	out := map[string]Outcome{}
	for _, f := range rep.TestResults {
		for _, a := range f.AssertionResults {
			var o Outcome
			switch a.Status {
			case "passed":
				o.Output = clip(passed(f.Name, append(slices.Clip(a.AncestorTitles), a.Title)), maxFailure)
			case "failed":
				o = Outcome{Failed: true, Output: clip(strings.Join(a.FailureMessages, "\n"), maxFailure)}
			default:
				continue
			}
			key := fileKey(Hello{Test: a.FullName, File: f.Name})
			if key == "" {
				continue
			}
			if prev, ok := out[key]; ok && prev.Failed {
				continue
			}
			out[key] = o
		}
	}
	return out, nil
}

// clip is s cut to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:utf8cut.At(s, n)] + "\n… (cut)"
}

// namePattern is a regular expression, in the syntax JavaScript's RegExp and Go's share,
// that matches exactly the names given.
func namePattern(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	if len(quoted) == 1 {
		return "^" + quoted[0] + "$"
	}
	return "^(?:" + strings.Join(quoted, "|") + ")$"
}

// wordIndex is the index in argv of the first word (see words) that is w, or -1.
func wordIndex(argv []string, w string) int {
	return slices.Index(words(argv), w)
}

// appendArgs adds args at the end of argv, after a "--" when argv runs an npm script
// (npm test, npm run test) that has none: npm passes what follows "--" to the script.
// pnpm, yarn and bun pass them without it.
func appendArgs(argv []string, args ...string) []string {
	out := slices.Clone(argv)
	if i := wordIndex(argv, "npm"); i >= 0 && !slices.Contains(argv[i+1:], "--") {
		rest := argv[i+1:]
		if len(rest) > 0 && (rest[0] == "test" || rest[0] == "t" || rest[0] == "run" || rest[0] == "run-script") {
			out = append(out, "--")
		}
	}
	return append(out, args...)
}

// hasFlag reports whether argv holds the flag name, as "name" or "name=…".
func hasFlag(argv []string, names ...string) bool {
	for _, a := range argv {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return true
			}
		}
	}
	return false
}

// sortedFiles are the distinct files of keys (fileKey), sorted.
func sortedFiles(only []string) (files, names []string, err error) {
	for _, k := range only {
		f, n, err := splitFileKey(k)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
		names = append(names, n)
	}
	slices.Sort(files)
	return slices.Compact(files), names, nil
}
