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
//
// default.yaml is read with no base, so it sets every key, and is the base of every
// other parse: the set's other built-ins, and the documents of the registries over it
// (their files, inline scenarios, a namespace's). A start therefore parses it whatever
// scenario it runs on, which is why newRegistry parses it first: when it is broken no
// registry is made, and the error (a *BuiltinError naming default.yaml) stops the start
// rather than a panic at the first parse that needs a base.
type builtinSet struct {
	fsys   fs.FS
	names  []string                             // sorted
	byName map[string]func() (*Scenario, error) // each parses its file once
	// base is the default, parsed once: byName["default"], or an error when there is
	// none.
	base   func() (*Scenario, error)
	parses atomic.Int32 // files parsed so far, for the tests
}

// embeddedBuiltins is the process's one set of the embedded scenarios.
var embeddedBuiltins = sync.OnceValue(func() *builtinSet { return newBuiltinSet(scenarios.FS) })

// defaultName is the built-in that every other scenario's missing sections come from.
const defaultName = "default"

// newBuiltinSet lists fsys's *.yaml files without reading them.
func newBuiltinSet(fsys fs.FS) *builtinSet {
	files, _ := fs.Glob(fsys, "*.yaml") // the pattern is valid: no error
	b := &builtinSet{fsys: fsys, byName: make(map[string]func() (*Scenario, error), len(files))}
	b.base = func() (*Scenario, error) {
		return nil, &BuiltinError{File: defaultName + ".yaml", Problems: []string{"there is no such file"}}
	}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".yaml")
		b.names = append(b.names, name)
		b.byName[name] = sync.OnceValues(func() (*Scenario, error) { return b.parse(f, name) })
	}
	if def, ok := b.byName[defaultName]; ok {
		b.base = def
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

// parse reads the built-in file, over the default unless it is the default. A broken
// default breaks every built-in: their error is the default's, naming default.yaml.
func (b *builtinSet) parse(file, name string) (*Scenario, error) {
	b.parses.Add(1)
	data, err := b.source(name)
	if err != nil {
		return nil, &BuiltinError{File: file, Problems: []string{err.Error()}}
	}
	var base *Scenario
	if name != defaultName {
		if base, err = b.base(); err != nil {
			return nil, err
		}
	}
	s, problems := parse(file, data, base)
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

// source is the text of the built-in named name, unparsed: what its parse reads, and
// so its Scenario's Raw.
func (b *builtinSet) source(name string) ([]byte, error) {
	return fs.ReadFile(b.fsys, name+".yaml")
}

// parseDoc parses a scenario document over b's default; a broken default is a problem
// of the document, which cannot be checked (never a panic: Parse's contract).
func (b *builtinSet) parseDoc(file string, data []byte) (*Scenario, []Problem) {
	base, err := b.base()
	if err != nil {
		return nil, []Problem{{File: file, Line: 1, Message: "cannot be checked: " + err.Error()}}
	}
	return parse(file, data, base)
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
