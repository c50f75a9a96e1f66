package scenario

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hostemu/hostemu/scenarios"
)

// builtinSet is the scenarios built into the binary, each parsed the first time it is
// needed and then shared by every registry of the process (a compiled scenario is
// immutable). An emulator starts on one scenario: parsing all seven at its start cost
// it a sixth of its page faults (issue #38).
//
// A built-in's name is its file's name without ".yaml", known without a parse; its
// name: key must say the same, which TestBuiltinsParse checks by parsing every file (so
// the files stay the one place a built-in is written, with no second list to keep).
// File names are unique, so two built-ins never claim one name.
type builtinSet struct {
	names  []string                             // sorted
	byName map[string]func() (*Scenario, error) // each parses its file once
	parses atomic.Int32                         // files parsed so far, for the tests
}

// embeddedBuiltins is the process's one set of the embedded scenarios. Its default is
// defaultScenario, the base every parse reads default.yaml into anyway: parsed over
// itself the file compiles to the same scenario (TestDefaultBuiltinIsTheBase), so a
// start on the default parses one file once, not twice.
var embeddedBuiltins = sync.OnceValue(func() *builtinSet {
	b := newBuiltinSet(scenarios.FS)
	b.byName["default"] = func() (*Scenario, error) { return defaultScenario(), nil }
	return b
})

// newBuiltinSet lists fsys's *.yaml files without reading them.
func newBuiltinSet(fsys fs.FS) *builtinSet {
	files, _ := fs.Glob(fsys, "*.yaml") // the pattern is valid: no error
	b := &builtinSet{byName: make(map[string]func() (*Scenario, error), len(files))}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".yaml")
		b.names = append(b.names, name)
		b.byName[name] = sync.OnceValues(func() (*Scenario, error) { return b.parse(fsys, f, name) })
	}
	slices.Sort(b.names)
	return b
}

// get is the built-in named name, parsed on its first use; false when there is none.
// An error is a broken built-in, a bug in hostemu: it names the file and every problem.
func (b *builtinSet) get(name string) (*Scenario, bool, error) {
	parse, ok := b.byName[name]
	if !ok {
		return nil, false, nil
	}
	s, err := parse()
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

func (b *builtinSet) parse(fsys fs.FS, file, name string) (*Scenario, error) {
	b.parses.Add(1)
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, &BuiltinError{File: file, Problems: []string{err.Error()}}
	}
	s, problems := Parse(file, data)
	if len(problems) > 0 || s == nil {
		e := &BuiltinError{File: file}
		for _, p := range problems {
			e.Problems = append(e.Problems, p.String())
		}
		return nil, e
	}
	if s.Name != name {
		return nil, &BuiltinError{File: file, Problems: []string{fmt.Sprintf("it names scenario %q, not %q as its file name does", s.Name, name)}}
	}
	s.Source = SourceBuiltin
	return s, nil
}

// BuiltinError is a built-in scenario that does not parse: a bug in hostemu (go test
// fails on it), reported as an internal error rather than as an unknown scenario.
type BuiltinError struct {
	File     string   // the file in scenarios/
	Problems []string // each "file:line:column: message"
}

func (e *BuiltinError) Error() string {
	return fmt.Sprintf("built-in scenario %s is broken (a bug in hostemu): %s", e.File, strings.Join(e.Problems, "; "))
}
