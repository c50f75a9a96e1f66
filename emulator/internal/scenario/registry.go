package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// SourceBuiltin is the Source of the scenarios built into the binary.
const SourceBuiltin = "builtin"

// Info describes one available scenario, for GET /_emulator/scenarios.
type Info struct {
	Name        string
	Description string
	Source      string // SourceBuiltin or the file it came from
	// Deleted marks the active scenario whose file is gone: it stays active in its last
	// version until another is chosen, but it cannot be chosen again.
	Deleted bool
	// Problem is why a built-in that does not parse cannot be chosen (its *BuiltinError,
	// a bug in hostemu: the file and every problem); "" for every other scenario. Such
	// a built-in has no description: it is listed, not left out, with this instead.
	Problem string
}

// Registry holds the scenarios by name: the built-ins, overridden or added to by the
// files of one directory. Reloads swap an immutable snapshot in atomically, so readers
// never lock and never see half a reload. It is safe for concurrent use.
type Registry struct {
	builtins *builtinSet          // parsed on first use, shared by the process
	inline   map[string]*Scenario // AddInline's, over the built-ins; guarded by loadMu

	loadMu sync.Mutex // serialises reloads (a derived registry's overlays), so snapshots and notifications keep their order
	snap   atomic.Pointer[snapshot]

	// base and own make a derived registry (Derive): its snapshot is base's current one
	// with own's scenarios over it, made again (overlay) whenever base's has moved on.
	// Both are set once, by Derive; own is never modified.
	base *Registry
	own  map[string]*Scenario

	subMu   sync.Mutex // guards subs and nextSub
	subs    map[int]func()
	nextSub int
}

// snapshot is one immutable state of the registry.
type snapshot struct {
	version uint64
	// scenarios is every scenario but the built-ins no other overrides: those are
	// looked up in the registry's builtins, so that none is parsed until it is needed.
	scenarios map[string]*Scenario
	infos     func() []Info // List's, made on its first call (it parses every built-in)
	problems  []Problem
	lastGood  map[string]*Scenario // by file path: the last version of the file that parsed
	// neverParsed is, by scenario name, the file that claims it (its name:, else its
	// file name) and has never parsed, so that no version of it is in force.
	neverParsed map[string]string
	// from is, in a derived registry, the base's snapshot this one overlays.
	from *snapshot
}

// current is the registry's snapshot in force: a base registry's as loaded; a derived
// one's made again from its base's when that has moved on since (a reload of the
// base's directory), so that reading a derived registry sees the base's reloads with
// no subscription to keep (a namespace's registry goes when the namespace does).
func (r *Registry) current() *snapshot {
	s := r.snap.Load()
	if r.base == nil || s.from == r.base.current() {
		return s
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	// again under the lock: whoever holds it overlays the base's latest, so a derived
	// snapshot never goes back to an older base
	from := r.base.current()
	if s = r.snap.Load(); s.from == from {
		return s
	}
	s = r.overlay(from)
	r.snap.Store(s)
	return s
}

// overlay is a derived registry's snapshot over its base's snapshot from: from's
// scenarios with r.own's in their place, from's problems and files (so that Broken
// answers as in the base for every name r.own does not define), and from's version, so
// that the derived registry's grows with its base's.
func (r *Registry) overlay(from *snapshot) *snapshot {
	byName := maps.Clone(from.scenarios)
	maps.Copy(byName, r.own)
	s := r.newSnapshot(from.version, byName, from.problems, from.lastGood)
	s.neverParsed = maps.Clone(from.neverParsed)
	for name := range r.own {
		delete(s.neverParsed, name) // a document defines it: that one is in force
	}
	s.from = from
	return s
}

// NewRegistry returns a registry of the built-in scenarios. An error means a built-in
// scenario is broken, a bug in hostemu: here, that there is no default or that it does
// not parse (a *BuiltinError naming default.yaml), the default being the base of every
// scenario, parsed here whatever scenario the caller runs on; another built-in that
// does not parse is found when it is first used (Find), and by go test
// (TestBuiltinsParse parses every one).
func NewRegistry() (*Registry, error) {
	return newRegistry(embeddedBuiltins())
}

func newRegistry(builtins *builtinSet) (*Registry, error) {
	if _, ok := builtins.byName[defaultName]; !ok {
		return nil, errors.New("built-in scenarios: no built-in default scenario")
	}
	if _, err := builtins.base(); err != nil {
		return nil, err
	}
	r := &Registry{builtins: builtins, inline: map[string]*Scenario{}, subs: map[int]func(){}}
	r.snap.Store(r.newSnapshot(1, map[string]*Scenario{}, nil, nil))
	return r, nil
}

// defaultBase is the default built-in, every parse's base: it parses, or newRegistry would
// have made no registry.
func (r *Registry) defaultBase() *Scenario {
	s, _ := r.builtins.base()
	return s
}

// newSnapshot is a snapshot of byName over r's built-ins. Its List is made when first
// asked for: that parses every built-in no scenario of byName overrides.
func (r *Registry) newSnapshot(version uint64, byName map[string]*Scenario, problems []Problem, lastGood map[string]*Scenario) *snapshot {
	s := &snapshot{version: version, scenarios: byName, problems: problems, lastGood: lastGood}
	s.infos = sync.OnceValue(func() []Info { return r.infos(s) })
	return s
}

// infos is snap's List: a built-in that does not parse (a bug, see Find) is listed with
// its problem rather than left out.
func (r *Registry) infos(snap *snapshot) []Info {
	names := r.names(snap)
	infos := make([]Info, 0, len(names))
	for _, name := range names {
		s, ok := snap.scenarios[name]
		if !ok {
			var err error
			if s, _, err = r.builtins.get(name); err != nil {
				infos = append(infos, Info{Name: name, Source: SourceBuiltin, Problem: err.Error()})
				continue
			}
		}
		infos = append(infos, Info{Name: s.Name, Description: s.Description, Source: s.Source})
	}
	return infos
}

// names is every scenario name of snap, sorted, with no parse.
func (r *Registry) names(snap *snapshot) []string {
	names := slices.Clone(r.builtins.names)
	for name := range snap.scenarios {
		if _, builtin := r.builtins.byName[name]; !builtin {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Get returns the scenario named name. The scenario is shared: never modify it. A
// built-in is parsed on its first use; one that does not parse is not found here, and
// Find says why.
func (r *Registry) Get(name string) (*Scenario, bool) {
	s, ok, _ := r.Find(name)
	return s, ok
}

// Find is Get, and the error of a built-in that does not parse (a *BuiltinError, a bug
// in hostemu), so that choosing it answers with an internal error naming the file
// rather than with an unknown scenario.
func (r *Registry) Find(name string) (*Scenario, bool, error) {
	if s, ok := r.current().scenarios[name]; ok {
		return s, true, nil
	}
	return r.builtins.get(name)
}

// List describes every available scenario, sorted by name. Its first call on a
// version of the registry parses every built-in, for their descriptions: a caller that
// needs the names or the text takes Sources, which parses none.
func (r *Registry) List() []Info {
	return slices.Clone(r.current().infos())
}

// Sources is the YAML source of every scenario List names, by name, as its file or
// document says it, with no parse: a built-in that no file or document overrides is
// its embedded file as it is (one that does not parse too: what the binary holds), any
// other scenario the text it was parsed from. A bundle's export needs the text, not the
// descriptions List parses every built-in for.
func (r *Registry) Sources() map[string][]byte {
	snap := r.current()
	names := r.names(snap)
	out := make(map[string][]byte, len(names))
	for _, name := range names {
		if s, ok := snap.scenarios[name]; ok {
			if len(s.Raw) > 0 {
				out[name] = s.Raw
			}
		} else if src, err := r.builtins.source(name); err == nil {
			out[name] = src
		}
	}
	return out
}

// NotFound words the refusal of an unknown scenario name: the name, and the closest
// known one ("did you mean") or the list of known names. Every place that takes a name
// (PUT /_emulator/scenarios/active, --scenario, a namespace's scenario) uses it.
func (r *Registry) NotFound(name string) string {
	names := r.names(r.current())
	msg := fmt.Sprintf("scenario %q not found", name)
	if best := yamlcheck.Closest(name, names); best != "" {
		return msg + fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + " (known: " + strings.Join(names, ", ") + ")"
}

// Problems are the problems of the directory's last load, sorted by file and line.
func (r *Registry) Problems() []Problem {
	return append([]Problem(nil), r.current().problems...)
}

// Broken is the problems of the file the scenario named name comes from, when that file
// is broken now and its last good version is what the registry holds; nil otherwise (a
// built-in, an inline scenario, a file that parses). Whoever chooses a scenario (a new
// namespace, PUT /_emulator/scenarios/active) refuses a broken one with these, rather
// than run a version the file no longer says.
//
// A file of the directory that has never parsed, and claims name (its name:, else its
// file name), is broken too: choosing name would otherwise run the built-in it meant to
// override, or be refused as unknown when the fault is the file's.
func (r *Registry) Broken(name string) []Problem {
	ps, _ := r.broken(name)
	return ps
}

// broken is Broken, and whether the file never parsed.
func (r *Registry) broken(name string) (ps []Problem, never bool) {
	snap := r.current()
	file, never := snap.neverParsed[name]
	if !never {
		s, ok := snap.scenarios[name]
		if !ok {
			return nil, false
		}
		if _, fromFile := snap.lastGood[s.Source]; !fromFile {
			return nil, false // not from a file of the directory
		}
		file = s.Source
	}
	var out []Problem
	for _, p := range snap.problems {
		if p.File == file {
			out = append(out, p)
		}
	}
	return out, never
}

// BrokenMessage words the refusal of a scenario whose file is broken (Broken): its
// name and every problem of the file, "file:line:column: message" each; "" when the
// scenario is not broken. Whoever takes a scenario name asks it before the name's
// existence, so that a file that never parsed answers with its problems.
func (r *Registry) BrokenMessage(name string) string {
	ps, never := r.broken(name)
	if len(ps) == 0 {
		return ""
	}
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.String()
	}
	why := "its file is broken (the last version that parsed stays in force only where it is already active)"
	if never {
		why = "its file has never parsed"
	}
	return fmt.Sprintf("scenario %q cannot be chosen: %s; fix %s: %s", name, why, ps[0].File, strings.Join(msgs, "; "))
}

// Version counts the registry's changes: it grows whenever a reload changes a scenario
// or the problems.
func (r *Registry) Version() uint64 {
	return r.current().version
}

// Subscribe calls fn after each reload that changed the registry (a scenario or the
// problems), so its owner can fetch the active scenario again by name. Calls are made
// one at a time, in the order of the changes, from the goroutine that reloaded; fn must
// not call LoadDir. The returned function unsubscribes. A derived registry changes
// when its base reloads: subscribing to it subscribes to the base.
func (r *Registry) Subscribe(fn func()) (cancel func()) {
	if r.base != nil {
		return r.base.Subscribe(fn)
	}
	r.subMu.Lock()
	defer r.subMu.Unlock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	return func() {
		r.subMu.Lock()
		defer r.subMu.Unlock()
		delete(r.subs, id)
	}
}

func (r *Registry) notify() {
	r.subMu.Lock()
	ids := make([]int, 0, len(r.subs))
	for id := range r.subs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	fns := make([]func(), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, r.subs[id])
	}
	r.subMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// AddInline parses one scenario document and adds it as if built in (overriding a
// built-in of the same name), for scenarios given in memory rather than in files. Call
// it before any other use of the registry. A document with problems adds nothing.
func (r *Registry) AddInline(source string, data []byte) []Problem {
	s, problems := r.builtins.parseDoc(source, data)
	if s == nil || len(problems) > 0 {
		return problems
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	r.inline[s.Name] = s
	r.snap.Store(r.newSnapshot(r.snap.Load().version+1, maps.Clone(r.inline), nil, nil))
	return nil
}

// LoadDir (re)loads every *.yaml and *.yml file directly in dir (not in subdirectories;
// names starting with a dot are skipped, as editors' lock and swap files are) and swaps
// the result in at once. A file that parses adds its scenario, or overrides the
// built-in of the same name. A file that fails keeps its last good version, if it had
// one, in force; its problems are recorded. A file gone from dir takes its scenario
// with it (a built-in of the same name comes back). When two files name the same
// scenario, the first in lexical order wins and the second is a problem. It returns the
// problems of this load (also in Problems).
func (r *Registry) LoadDir(dir string) []Problem {
	return r.load(dir, nil)
}

// load is LoadDir; report, when set, is told of every load and whether it changed the
// registry, before subscribers hear of the change.
func (r *Registry) load(dir string, report func(problems []Problem, changed bool)) []Problem {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	old := r.snap.Load()

	files, problems := scenarioFiles(dir)
	byName := maps.Clone(r.inline)
	claimed := map[string]string{} // scenario name → file that defines it
	lastGood := map[string]*Scenario{}
	neverParsed := map[string]string{}
	for _, file := range files {
		path := file.path
		s, name, ps := file.parse(r.defaultBase())
		problems = append(problems, ps...)
		if s == nil {
			s = old.lastGood[path]
		}
		if s == nil {
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			}
			if _, first := neverParsed[name]; !first {
				neverParsed[name] = path
			}
			continue
		}
		lastGood[path] = s
		if other, dup := claimed[s.Name]; dup {
			problems = append(problems, Problem{File: path, Line: s.nameLine,
				Message: fmt.Sprintf("scenario %q is already defined in %s; this file is ignored", s.Name, other)})
			continue
		}
		claimed[s.Name] = path
		byName[s.Name] = s
	}
	for name := range claimed {
		delete(neverParsed, name) // a file that parses defines it: that one is in force
	}
	sortProblems(problems)
	if reflect.DeepEqual(byName, old.scenarios) && reflect.DeepEqual(problems, old.problems) {
		// Nothing users see changed; a file ignored as a duplicate may still have a new
		// last good version, so keep that without bumping the version.
		r.snap.Store(&snapshot{version: old.version, scenarios: old.scenarios, infos: old.infos, problems: old.problems, lastGood: lastGood, neverParsed: neverParsed})
		if report != nil {
			report(problems, false)
		}
		return problems
	}
	// Keep the scenarios that did not change, so their pointers stay stable.
	for name, s := range byName {
		if prev, ok := old.scenarios[name]; ok && prev != s && reflect.DeepEqual(prev, s) {
			byName[name] = prev
		}
	}
	next := r.newSnapshot(old.version+1, byName, problems, lastGood)
	next.neverParsed = neverParsed
	r.snap.Store(next)
	if report != nil {
		report(problems, true)
	}
	r.notify()
	return problems
}

// scenarioFile is a file of the scenarios directory, as read.
type scenarioFile struct {
	path string
	data []byte
	err  error // why it could not be read
}

// parse parses the file over base, saying the name it claims even when it fails
// (parseNamed); a file that could not be read is one problem.
func (f scenarioFile) parse(base *Scenario) (*Scenario, string, []Problem) {
	if f.err != nil {
		return nil, "", []Problem{{File: f.path, Message: readProblem(f.err)}}
	}
	return parseNamed(f.path, f.data, base)
}

// readProblem words a file that cannot be read: a link out of the directory and a
// file over the size limit are named as such, with nothing of their content.
func readProblem(err error) string {
	var big *yamlcheck.TooLargeError
	switch {
	case errors.Is(err, yamlcheck.ErrOutside):
		return err.Error()
	case errors.As(err, &big):
		return fmt.Sprintf("%v for a scenario file", err)
	}
	return fmt.Sprintf("cannot read: %v", err)
}

// readFile reads a scenario file named by the user (a symlink is followed).
func readFile(path string) ([]byte, error) {
	return yamlcheck.ReadFile(path, yamlcheck.MaxScenarioBytes)
}

// scenarioFiles lists dir's scenario files in lexical order: *.yaml and *.yml, not
// dotfiles, not in subdirectories. Links to files in dir count (Kubernetes ConfigMaps
// are links); a link out of dir is listed so that reading it reports it, and its
// target is never read. Every file is read at most yamlcheck.MaxScenarioBytes long.
func scenarioFiles(dir string) ([]scenarioFile, []Problem) {
	d, err := yamlcheck.OpenDir(dir)
	if err != nil {
		msg := fmt.Sprintf("cannot read the scenarios directory: %v", yamlcheck.Pathless(err))
		if errors.Is(err, fs.ErrNotExist) {
			msg = "the scenarios directory does not exist; only the built-in scenarios are available until it does"
		}
		return nil, []Problem{{File: dir, Message: msg}}
	}
	defer d.Close()
	names, err := d.Files()
	if err != nil {
		return nil, []Problem{{File: dir, Message: fmt.Sprintf("cannot read the scenarios directory: %v", yamlcheck.Pathless(err))}}
	}
	files := make([]scenarioFile, 0, len(names))
	for _, name := range names {
		data, err := d.Read(name, yamlcheck.MaxScenarioBytes)
		files = append(files, scenarioFile{path: filepath.Join(dir, name), data: data, err: err})
	}
	return files, nil
}

// Derive is a registry of r's scenarios plus the scenario documents docs (each named
// source[i] in problems), for one world of its own (a namespace given scenarios at
// creation): a document's scenario overrides one of the same name. Two documents
// naming one scenario are a problem on the second, as two files of a directory are
// (which one a test gets must never be a guess). A document with problems derives
// nothing: every problem of every document is returned.
//
// The derived registry follows r's reloads for every name no document defines, as a
// world on r itself does: a file fixed, changed, added or deleted after the derive is
// seen in it at its next read, a file broken since is refused in it, and the documents'
// scenarios stay as given whatever r's files say. It knows r's broken files (their
// problems, and the names files that never parsed claim), so that Broken answers in it
// as in r for every name no document overrides: a world with scenarios of its own
// refuses a broken file's scenario as every other world does, rather than run its last
// good version or the built-in it meant to override. Its Version is r's, and
// Subscribe subscribes to r. Call LoadDir, Watch and AddInline on r, never on it.
func (r *Registry) Derive(source string, docs []string) (*Registry, []Problem) {
	var problems []Problem
	own := make(map[string]*Scenario, len(docs))
	claimed := make(map[string]string, len(docs))
	for i, doc := range docs {
		path := fmt.Sprintf("%s[%d]", source, i)
		s, ps := r.builtins.parseDoc(path, []byte(doc))
		problems = append(problems, ps...)
		if s == nil {
			continue
		}
		if other, dup := claimed[s.Name]; dup {
			problems = append(problems, Problem{File: path, Line: s.nameLine,
				Message: fmt.Sprintf("scenario %q is already defined in %s", s.Name, other)})
			continue
		}
		claimed[s.Name] = path
		if len(ps) == 0 {
			own[s.Name] = s
		}
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return nil, problems
	}
	d := &Registry{builtins: r.builtins, inline: map[string]*Scenario{}, subs: map[int]func(){}, base: r, own: own}
	d.snap.Store(d.overlay(r.current()))
	return d, nil
}
