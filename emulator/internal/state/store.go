package state

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/notify"
)

// Store is one world's resources. It is safe for concurrent use; every read returns
// a copy, so a reader never sees a half-made change.
type Store struct {
	mu sync.RWMutex // guards everything below
	tables

	// changes counts every change, bumped by the mutator that makes it while it holds
	// mu, so no caller can forget it; the same call hands the change to the hook.
	changes atomic.Uint64
	hook    func(Change)  // receives every change (see SetHook)
	woken   notify.Signal // wakes NextChange's waiters
}

// tables are a Store's resources and indexes: what resetFor makes and Load replaces
// as one.
type tables struct {
	projects    map[string]*Project
	projectIdx  index
	deployments map[string]*Deployment
	allIdx      index
	byProject   map[string]*index
	domains     map[string]*Domain // by hostname
	domainIdx   map[string]*index  // by project id; key ID is the hostname
	tokens      *tokenTable
	files       map[string]struct{}
	detaching   []Detachment
	byLabel     map[string]string   // deployment host label → id, only for labels whose suffix does not name their id (see setLabel)
	detached    map[string]struct{} // recently detached hostnames, at most maxDetached
	detachedLog []string            // detached's hostnames, oldest first
	policy      Policy
	cipher      Cipher
	// gen tells these tables from every other a store has had (see DeploymentRef):
	// each resetFor draws a new one
	gen uint64
}

// tableGens draws the tables' generations, unique in the process.
var tableGens atomic.Uint64

// Changes counts the changes made so far; it only grows.
func (s *Store) Changes() uint64 { return s.changes.Load() }

// NextChange returns a channel closed at the next change (see notify.Signal).
func (s *Store) NextChange() <-chan struct{} { return s.woken.Next() }

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.reset()
	return s
}

func (s *Store) reset() { s.resetFor(&Snapshot{}) }

// resetFor empties the store, its maps made for what snap holds (a world is built
// for each namespace: its maps are made once, not again as they fill).
func (s *Store) resetFor(snap *Snapshot) {
	s.projects = make(map[string]*Project, len(snap.Projects))
	s.projectIdx = index{}
	s.deployments = make(map[string]*Deployment, len(snap.Deployments))
	s.allIdx = index{}
	s.byProject = make(map[string]*index, len(snap.Projects))
	s.domains = make(map[string]*Domain, len(snap.Domains))
	s.domainIdx = make(map[string]*index, len(snap.Projects))
	s.tokens = newTokenTable()
	s.files = make(map[string]struct{}, len(snap.Files))
	s.detaching = nil
	s.byLabel = map[string]string{} // not sized for snap: most labels name their id and have no entry (setLabel)
	s.detached = map[string]struct{}{}
	s.detachedLog = nil
	s.policy = Policy{DomainWriteScope: ScopeAdmin}
	s.cipher = Cipher{}
	s.gen = tableGens.Add(1)
}

// Load replaces the whole state with snap. It checks snap first (see Snapshot.Check) and
// changes nothing when snap is inconsistent. Load takes snap's deployments and domains
// over in place, without copying them one by one (a world may hold 100,000): the
// caller must not use those slices afterwards. It is Commit(Prepare(snap)).
func (s *Store) Load(snap Snapshot) error { return s.Commit(s.Prepare(snap)) }

// Prepared is a snapshot checked and built into a store's maps and indexes aside
// (Store.Prepare), for Store.Commit to put in place: until then the store is as it was.
type Prepared struct {
	tables
	snap Snapshot
	err  error
}

// Err is the snapshot's Check: what Commit refuses it for, nil when it is consistent.
func (p *Prepared) Err() error { return p.err }

// HasDeployment reports whether the snapshot holds a deployment of id, HasDomain a
// domain of hostname: looked up in the maps built, rather than by a pass over its
// items.
func (p *Prepared) HasDeployment(id string) bool { return p.deployments[id] != nil }

// HasDomain: see HasDeployment.
func (p *Prepared) HasDomain(hostname string) bool { return p.domains[hostname] != nil }

// Prepare checks snap and builds the store's maps and indexes for it aside, changing
// nothing: Commit puts them in place (a replay asks what it needs of the new world
// between the two, and decides whether it fits, before anything changes). It takes
// snap's items over as Load does.
//
// The check runs on a goroutine of its own while the new maps and indexes are built
// (a replay's world is otherwise loaded on one core while the other waits), and the
// file digests' set on a third. The build writes only what it makes, and the capacity
// of the deployments' logs, which the check does not read.
func (s *Store) Prepare(snap Snapshot) *Prepared {
	var n Store
	n.resetFor(&snap)
	checked, filed, built := make(chan error, 1), make(chan struct{}), make(chan struct{})
	// the check looks deployments up in the build's map once the build is done, rather
	// than make one of its own beside it
	go func() {
		checked <- snap.check(func() map[string]*Deployment {
			<-built
			return n.deployments
		})
	}()
	// the file digests' set, the biggest map, on a third: the check, the build and it
	// take about as long each (a replay of 100,000 deployments: 60, 55 and 45 ms), and
	// the one that ends last is not made to wait for another
	go func() {
		for _, f := range snap.Files {
			n.files[f] = struct{}{}
		}
		close(filed)
	}()
	n.build(&snap)
	close(built)
	<-filed
	err := <-checked
	snap.filesRead = nil // the check's alone: not kept with the world
	return &Prepared{tables: n.tables, snap: snap, err: err}
}

// Commit puts a prepared snapshot in place of the whole state, or changes nothing and
// returns its Err when it is inconsistent. A Prepared is committed once at most.
func (s *Store) Commit(p *Prepared) error {
	if p.err != nil {
		return p.err
	}
	snap := p.snap
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = p.tables
	loaded := snap
	if s.hook != nil {
		// the store now owns these arrays and updates items in place: the hook gets
		// copies of the items (their Logs, Env and Files are only ever replaced or
		// appended to past its length, so sharing them is safe)
		loaded.Deployments = slices.Clone(snap.Deployments)
		loaded.Domains = slices.Clone(snap.Domains)
		loaded.Detaching = slices.Clone(snap.Detaching)
		loaded.Uploads = slices.Clone(snap.Uploads) // not kept here (the edge's file store has them), but logged
	}
	s.changed(Change{Load: &loaded})
	return nil
}

// build fills the tables of s, a Store of its own that nobody else sees and that
// resetFor made for snap, but its files: beside snap.Check, it reads snap, changing
// only the capacity of the deployments' logs, which the check does not read, and skips
// what refers to a project snap does not have (the check refuses the snapshot then).
func (s *Store) build(snap *Snapshot) {
	for _, t := range snap.Tokens {
		s.tokens.add(t)
	}
	if snap.Policy.DomainWriteScope != "" {
		s.policy = snap.Policy
	}
	s.cipher = snap.Cipher
	// Indexes are filled unsorted and sorted once: inserting one by one would cost
	// O(n²) for a snapshot listed newest first.
	// the projects and their indexes in one allocation each, not one per project
	projects := slices.Clone(snap.Projects)
	indexes := make([]index, 2*len(projects))
	s.projectIdx.keys = make([]Key, 0, len(projects))
	for i := range projects {
		p := &projects[i]
		p.Env = maps.Clone(p.Env)
		s.projects[p.ID] = p
		s.projectIdx.keys = append(s.projectIdx.keys, keyOf(p.CreatedAt, p.ID))
		s.byProject[p.ID] = &indexes[2*i]
		s.domainIdx[p.ID] = &indexes[2*i+1]
	}
	s.allIdx.keys = make([]Key, 0, len(snap.Deployments))
	for i := range snap.Deployments {
		d := &snap.Deployments[i]
		d.Logs = slices.Clip(d.Logs) // appends then copy: the log array may be shared
		s.deployments[d.ID] = d
		s.setLabel(d)
		k := keyOf(d.CreatedAt, d.ID)
		s.allIdx.keys = append(s.allIdx.keys, k)
		if x := s.byProject[d.ProjectID]; x != nil {
			x.keys = append(x.keys, k)
		}
	}
	for i := range snap.Domains {
		d := &snap.Domains[i]
		s.domains[d.Hostname] = d
		if x := s.domainIdx[d.ProjectID]; x != nil {
			x.keys = append(x.keys, keyOf(d.CreatedAt, d.Hostname))
		}
	}
	s.projectIdx.sort()
	s.allIdx.sort()
	for _, x := range s.byProject {
		x.sort()
	}
	for _, x := range s.domainIdx {
		x.sort()
	}
	s.detaching = slices.Clone(snap.Detaching)
}

func (s *Store) insertDeployment(d *Deployment) {
	s.deployments[d.ID] = d
	s.setLabel(d)
	k := keyOf(d.CreatedAt, d.ID)
	s.allIdx.insert(k)
	s.byProject[d.ProjectID].insert(k)
}

// Export returns the whole state, newest first in each list.
func (s *Store) Export() Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.exportLocked()
}

func (s *Store) exportLocked() Snapshot {
	snap := Snapshot{Policy: s.policy, Cipher: s.cipher, Detaching: slices.Clone(s.detaching)}
	snap.Tokens = s.tokens.all()
	s.projectIdx.walk(Range{}, func(k Key) bool {
		snap.Projects = append(snap.Projects, *s.projects[k.ID])
		return true
	})
	if n := len(s.deployments); n > 0 {
		snap.Deployments = make([]Deployment, 0, n)
	}
	s.allIdx.walk(Range{}, func(k Key) bool {
		snap.Deployments = append(snap.Deployments, *s.deployments[k.ID])
		return true
	})
	for _, p := range snap.Projects {
		s.domainIdx[p.ID].walk(Range{}, func(k Key) bool {
			snap.Domains = append(snap.Domains, *s.domains[k.ID])
			return true
		})
	}
	for f := range s.files {
		snap.Files = append(snap.Files, f)
	}
	slices.Sort(snap.Files)
	return snap
}

// Authenticate returns the scope of token, comparing in constant time (see tokenTable).
func (s *Store) Authenticate(token string) (Scope, bool) {
	scope, _, ok := s.AuthenticateKey(token)
	return scope, ok
}

// AuthenticateKey is Authenticate that also returns the key the token's requests are
// counted under: stable for the token, and not the token itself.
func (s *Store) AuthenticateKey(token string) (Scope, string, bool) {
	s.mu.RLock()
	r, ok := s.tokens.find(token)
	s.mu.RUnlock()
	if !ok {
		return "", "", false
	}
	return r.tok.Scope, r.key, true
}

// Tokens lists the hosting tokens, by scope then token.
func (s *Store) Tokens() []Token {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tokens.all()
}

func sortTokens(ts []Token) {
	slices.SortFunc(ts, func(a, b Token) int {
		if a.Scope != b.Scope {
			return a.Scope.rank() - b.Scope.rank()
		}
		return strings.Compare(a.Token, b.Token)
	})
}

// AddToken adds (or replaces) a hosting token.
func (s *Store) AddToken(t Token) {
	s.mu.Lock()
	s.tokens.add(t)
	s.changed(Change{Token: &t})
	s.mu.Unlock()
}

// RevokeToken removes a hosting token, reporting whether it existed.
func (s *Store) RevokeToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokens.remove(token) {
		return false
	}
	s.changed(Change{Revoked: token})
	return true
}

// Policy returns the permission policy.
func (s *Store) Policy() Policy {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.policy
}

// Cipher returns the decryption service's credentials.
func (s *Store) Cipher() Cipher {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cipher
}

// Project returns a project by id.
func (s *Store) Project(id string) (Project, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.projects[id]
	if !ok {
		return Project{}, apperr.Errorf(apperr.ProjectNotFound, "project %q not found", id)
	}
	return *p, nil
}

// Projects lists projects newest first after the cursor key.
func (s *Store) Projects(after *Key, limit int) ([]Project, *Key) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Project
	next := page(&s.projectIdx, Range{After: after}, limit, func(k Key) bool {
		out = append(out, *s.projects[k.ID])
		return true
	})
	return out, next
}

// page walks x within r, offering each key to take (which reports whether it kept the
// item) until limit items are kept, and returns the cursor key for the next page (nil
// when the walk reached the end).
func page(x *index, r Range, limit int, take func(Key) bool) *Key {
	n := 0
	var last Key
	more := false
	x.walk(r, func(k Key) bool {
		if n == limit {
			more = true
			return false
		}
		if take(k) {
			n++
			last = k
		}
		return true
	})
	if !more {
		return nil
	}
	return &last
}

// DeploymentQuery filters a deployment list.
type DeploymentQuery struct {
	ProjectID string
	Target    string
	Status    string
	Range     Range
	Limit     int
}

// Deployments lists deployments newest first. A page of all deployments or of one
// project's costs O(log n + limit); the target and status filters skip what they drop.
func (s *Store) Deployments(q DeploymentQuery) ([]Deployment, *Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x := &s.allIdx
	if q.ProjectID != "" {
		var ok bool
		if x, ok = s.byProject[q.ProjectID]; !ok {
			return nil, nil, apperr.Errorf(apperr.ProjectNotFound, "project %q not found", q.ProjectID)
		}
	}
	out := make([]Deployment, 0, min(q.Limit, 100))
	next := page(x, q.Range, q.Limit, func(k Key) bool {
		d := s.deployments[k.ID]
		if (q.Target != "" && d.Target != q.Target) || (q.Status != "" && d.Status != q.Status) {
			return false
		}
		out = append(out, *d)
		return true
	})
	return out, next, nil
}

// Deployment returns a deployment and whether it is its project's production deployment.
func (s *Store) Deployment(id string) (Deployment, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.deployments[id]
	if !ok {
		return Deployment{}, false, apperr.Errorf(apperr.DeploymentNotFound, "deployment %q not found", id)
	}
	return *d, s.projects[d.ProjectID].ProductionDeploymentID == id, nil
}

// DeploymentWithEnv is Deployment with its project's environment, read under one lock:
// what a full deployment object needs.
func (s *Store) DeploymentWithEnv(id string) (Deployment, map[string]string, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.deployments[id]
	if !ok {
		return Deployment{}, nil, false, apperr.Errorf(apperr.DeploymentNotFound, "deployment %q not found", id)
	}
	p := s.projects[d.ProjectID]
	return *d, p.Env, p.ProductionDeploymentID == id, nil
}

// ProjectEnv returns a project's environment (read-only; never mutated in place).
func (s *Store) ProjectEnv(id string) map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p, ok := s.projects[id]; ok {
		return p.Env
	}
	return nil
}

// CreateDeployment stores a new deployment. Its project must exist and its id be new.
func (s *Store) CreateDeployment(d Deployment) error {
	_, err := s.CreateDeploymentRef(d)
	return err
}

// DeploymentRef names a stored deployment for UpdateDeploymentRef without its id: a
// lifecycle's steps change the deployment it created without a lookup in the map of
// every deployment (where a deployment created seconds ago is no longer in the
// processor's cache). It holds the deployment the store keeps and the generation of
// the tables that keep it; once those tables are replaced (Load, reset), the ref is
// stale and UpdateDeploymentRef finds the deployment by id, as UpdateDeployment
// does. The zero DeploymentRef is always stale.
type DeploymentRef struct {
	d   *Deployment
	gen uint64
}

// CreateDeploymentRef is CreateDeployment, and gives the ref of the deployment stored.
func (s *Store) CreateDeploymentRef(d Deployment) (DeploymentRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[d.ProjectID]; !ok {
		return DeploymentRef{}, apperr.Errorf(apperr.ProjectNotFound, "project %q not found", d.ProjectID)
	}
	if _, ok := s.deployments[d.ID]; ok {
		return DeploymentRef{}, ErrIDTaken
	}
	s.insertDeployment(&d)
	ref := DeploymentRef{d: &d, gen: s.gen}
	if s.hook == nil { // nobody keeps the change: no copy (a create's hot path)
		s.changed(Change{})
		return ref, nil
	}
	dc := d
	s.changed(Change{Deployment: &dc})
	return ref, nil
}

// ErrIDTaken is CreateDeployment's answer to an id already in use: the caller draws
// another.
var ErrIDTaken = errors.New("deployment id already exists")

// UpdateDeployment applies fn to a deployment under the write lock and returns the result.
// fn may change the deployment's project only in its ProductionDeploymentID: the change
// handed to the hook carries the project only when that moved.
func (s *Store) UpdateDeployment(id string, fn func(d *Deployment, p *Project)) (Deployment, error) {
	return s.UpdateDeploymentRef(DeploymentRef{}, id, fn)
}

// UpdateDeploymentRef is UpdateDeployment of the deployment ref names, when ref is
// not stale (the tables that made it are still the store's); else of the deployment
// id, found by id. ref, when not stale, names deployment id: within one generation of
// tables a deployment is never replaced or removed, so it is the one the map holds.
func (s *Store) UpdateDeploymentRef(ref DeploymentRef, id string, fn func(d *Deployment, p *Project)) (Deployment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := ref.d
	if d == nil || ref.gen != s.gen {
		var ok bool
		if d, ok = s.deployments[id]; !ok {
			return Deployment{}, apperr.Errorf(apperr.DeploymentNotFound, "deployment %q not found", id)
		}
	}
	p := s.projects[d.ProjectID]
	var production string
	if p != nil { // every deployment has its project (creates and Load check it); a step never panics on one that does not
		production = p.ProductionDeploymentID
	}
	fn(d, p)
	if s.hook == nil { // nobody keeps the change: no copies (every lifecycle step)
		s.changed(Change{})
		return *d, nil
	}
	dc := *d
	c := Change{Deployment: &dc}
	if p != nil && p.ProductionDeploymentID != production {
		// the project goes with the change only when fn moved its production pointer,
		// the one field of it a deployment's step changes: most steps leave it, and
		// the --state log then writes the deployment alone (a third of a step's record)
		pc := *p
		c.Project = &pc
	}
	s.changed(c)
	return *d, nil
}

// Promote makes a ready deployment its project's production deployment, in one step
// under the write lock, and returns the project's previous production deployment id.
// rollback tells a roll back: the deployment is older than the production one it
// replaces (the spec: "promoting an earlier deployment is how a roll back is done").
func (s *Store) Promote(id string) (projectID, previous string, rollback bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deployments[id]
	if !ok {
		return "", "", false, apperr.Errorf(apperr.DeploymentNotFound, "deployment %q not found", id)
	}
	if d.Status != StatusReady {
		return "", "", false, apperr.Errorf(apperr.DeploymentNotReady, "deployment %q is %s; only a ready deployment can be promoted", id, d.Status)
	}
	p := s.projects[d.ProjectID]
	previous, p.ProductionDeploymentID = p.ProductionDeploymentID, id
	if prev, ok := s.deployments[previous]; ok && previous != id {
		// before means newer (indexes list newest first): a roll back is to a
		// deployment older than the production one it replaces
		rollback = keyOf(prev.CreatedAt, prev.ID).before(keyOf(d.CreatedAt, d.ID))
	}
	pc := *p
	s.changed(Change{Project: &pc})
	return p.ID, previous, rollback, nil
}

// MissingFiles lists the SHA-256 hex digests among files' values that were never
// uploaded, sorted, each once: what strict uploads refuse. It takes the lock once,
// however many files a deployment names.
func (s *Store) MissingFiles(files map[string]string) []string {
	var missing []string
	s.mu.RLock()
	for _, h := range files {
		if _, ok := s.files[h]; !ok {
			missing = append(missing, h)
		}
	}
	s.mu.RUnlock()
	slices.Sort(missing)
	return slices.Compact(missing)
}

// AddFile records an uploaded file's digest; its content (kept by the edge's file
// store, not here) goes with the change, so a change log keeps it too.
func (s *Store) AddFile(hash string, content []byte) {
	s.mu.Lock()
	s.files[hash] = struct{}{}
	s.changed(Change{File: hash, Content: content})
	s.mu.Unlock()
}

// Domain returns a domain by hostname.
func (s *Store) Domain(hostname string) (Domain, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, ok := s.domains[hostname]
	if !ok {
		return Domain{}, apperr.Errorf(apperr.DomainNotFound, "domain %q not found", hostname)
	}
	return *d, nil
}

// Domains lists a project's domains newest first.
func (s *Store) Domains(projectID string, after *Key, limit int) ([]Domain, *Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x, ok := s.domainIdx[projectID]
	if !ok {
		return nil, nil, apperr.Errorf(apperr.ProjectNotFound, "project %q not found", projectID)
	}
	var out []Domain
	next := page(x, Range{After: after}, limit, func(k Key) bool {
		out = append(out, *s.domains[k.ID])
		return true
	})
	return out, next, nil
}

// AddDomain attaches a new hostname to its project. Hostnames are unique across projects.
func (s *Store) AddDomain(d Domain) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.domainIdx[d.ProjectID]
	if !ok {
		return apperr.Errorf(apperr.ProjectNotFound, "project %q not found", d.ProjectID)
	}
	if _, ok := s.domains[d.Hostname]; ok {
		return apperr.Errorf(apperr.DomainAlreadyExists, "domain %q is already attached to a project", d.Hostname)
	}
	s.domains[d.Hostname] = &d
	x.insert(keyOf(d.CreatedAt, d.Hostname))
	dc := d
	s.changed(Change{Domain: &dc})
	return nil
}

// UpdateDomain applies fn to a domain under the write lock and returns the result.
func (s *Store) UpdateDomain(hostname string, fn func(d *Domain)) (Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.domains[hostname]
	if !ok {
		return Domain{}, apperr.Errorf(apperr.DomainNotFound, "domain %q not found", hostname)
	}
	fn(d)
	dc := *d
	s.changed(Change{Domain: &dc})
	return *d, nil
}

// DeleteDomain removes a project's domain at once (the hostname is free again) and
// records its detachment from the edge, due at detachAt.
func (s *Store) DeleteDomain(projectID, hostname string, now, detachAt time.Time) (Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.domainIdx[projectID]
	if !ok {
		return Domain{}, apperr.Errorf(apperr.ProjectNotFound, "project %q not found", projectID)
	}
	d, ok := s.domains[hostname]
	if !ok || d.ProjectID != projectID {
		return Domain{}, apperr.Errorf(apperr.DomainNotFound, "domain %q not found in project %q", hostname, projectID)
	}
	delete(s.domains, hostname)
	x.remove(keyOf(d.CreatedAt, hostname))
	gone := *d
	s.detaching = append(s.detaching, Detachment{Hostname: hostname, DeleteAt: now, DetachAt: detachAt, Domain: &gone})
	detaching := slices.Clone(s.detaching)
	s.changed(Change{DomainDeleted: hostname, Detaching: &detaching})
	return *d, nil
}

// Detached completes the edge detachment of a deleted hostname.
func (s *Store) Detached(hostname string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.detaching)
	s.detaching = slices.DeleteFunc(s.detaching, func(d Detachment) bool {
		return d.Hostname == hostname && !d.DetachAt.After(at)
	})
	if len(s.detaching) < n {
		s.tombstone(hostname)
	}
	detaching := slices.Clone(s.detaching)
	s.changed(Change{Detaching: &detaching})
}

// maxDetached bounds the detached hostnames the edge keeps answering 404 unknown_host
// for (rather than handing them to the APIs): the most recent ones.
const maxDetached = 1024

func (s *Store) tombstone(hostname string) {
	if _, ok := s.detached[hostname]; ok {
		return
	}
	if len(s.detachedLog) == maxDetached {
		delete(s.detached, s.detachedLog[0])
		s.detachedLog = s.detachedLog[1:]
	}
	s.detached[hostname] = struct{}{}
	s.detachedLog = append(s.detachedLog, hostname)
}

// hostOfURL is a deployment URL's host: "https://shop-abc.hostemu.localhost" → "shop-abc.hostemu.localhost".
func hostOfURL(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, ":/"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// labelOf is the first label of a deployment URL's host: "https://shop-abc.hostemu.localhost" → "shop-abc".
// It is hostOfURL's host up to its first dot, found in one pass (a replay takes it of
// every deployment; strings.IndexAny's general search cost more than the map insert).
func labelOf(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '.' || c == ':' || c == '/' {
			return rest[:i]
		}
	}
	return rest
}

// DeploymentByLabel returns the deployment whose host's first label is label.
func (s *Store) DeploymentByLabel(label string) (Deployment, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id, ok := s.byLabel[label]; ok {
		return *s.deployments[id], true
	}
	if suffix, ok := labelSuffix(label); ok {
		var buf [len("dpl_") + maxLabelSuffix]byte
		id := append(append(buf[:0], "dpl_"...), suffix...)
		if d, ok := s.deployments[string(id)]; ok && labelOf(d.URL) == label { // no allocation: a map index
			return *d, true
		}
	}
	return Deployment{}, false
}

// setLabel makes d the deployment of its URL's first label, as a map of every label to
// its id would, the last one set winning. A label whose suffix is d's id without its
// "dpl_" (labelSuffix: every URL hostemu makes from an id of lowercase letters and
// digits) is found through deployments, without an entry of its own — a create's hot
// path, and a world's memory — and an earlier deployment of the same label is
// forgotten; another label (an imported state's URL, an id hashed into its suffix) is
// kept in byLabel, which DeploymentByLabel asks first. FuzzDeploymentByLabel holds the
// two to one map.
func (s *Store) setLabel(d *Deployment) {
	label := labelOf(d.URL)
	if suffix, ok := labelSuffix(label); ok && len(d.ID) == len("dpl_")+len(suffix) && strings.HasPrefix(d.ID, "dpl_") && d.ID[len("dpl_"):] == suffix {
		if len(s.byLabel) > 0 {
			delete(s.byLabel, label)
		}
		return
	}
	s.byLabel[label] = d.ID
}

// labelSuffix is what follows a deployment label's last hyphen: "shop-abc123" → "abc123";
// false when there is none, or it is longer than maxLabelSuffix.
func labelSuffix(label string) (string, bool) {
	i := strings.LastIndexByte(label, '-')
	if i < 0 || i == len(label)-1 || len(label)-1-i > maxLabelSuffix {
		return "", false
	}
	return label[i+1:], true
}

// maxLabelSuffix is the longest label suffix DeploymentByLabel finds through the id it
// names (the id is built in a buffer of its own on the stack).
const maxLabelSuffix = 40

// EdgeDomain is a domain as the edge routes it, with its project's production
// deployment read in the same instant (the one read that makes a promote atomic at the
// edge): an attached domain, a deleted one until it detaches, or a tombstone
// (Detached) for a hostname detached recently.
type EdgeDomain struct {
	Domain     Domain
	Production *Deployment
	Detached   bool
}

// EdgeDomain returns what the edge serves at exactly hostname.
func (s *Store) EdgeDomain(hostname string) (EdgeDomain, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var d *Domain
	for i := range s.detaching { // a deleted domain is served until it detaches
		if dt := &s.detaching[i]; dt.Hostname == hostname && dt.Domain != nil {
			d = dt.Domain
		}
	}
	if d == nil {
		d = s.domains[hostname]
	}
	if d == nil {
		_, gone := s.detached[hostname]
		return EdgeDomain{Detached: gone}, gone
	}
	out := EdgeDomain{Domain: *d}
	if p, ok := s.projects[d.ProjectID]; ok && p.ProductionDeploymentID != "" {
		prod := *s.deployments[p.ProductionDeploymentID]
		out.Production = &prod
	}
	return out, true
}

// InFlight returns what a freshly loaded world must schedule: deployments still queued or
// building, every domain, and hostnames still detaching. It copies only those, so that
// resuming a world of 100,000 finished deployments costs nothing like an export.
func (s *Store) InFlight() ([]Deployment, []Domain, []Detachment) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ds []Deployment
	for _, d := range s.deployments {
		if InFlight(d.Status) {
			ds = append(ds, *d)
		}
	}
	slices.SortFunc(ds, func(a, b Deployment) int { return keyOrder(keyOf(a.CreatedAt, a.ID), keyOf(b.CreatedAt, b.ID)) })
	doms := make([]Domain, 0, len(s.domains))
	for _, d := range s.domains {
		doms = append(doms, *d)
	}
	slices.SortFunc(doms, func(a, b Domain) int { return keyOrder(keyOf(a.CreatedAt, a.Hostname), keyOf(b.CreatedAt, b.Hostname)) })
	return ds, doms, slices.Clone(s.detaching)
}

// Route is one host the edge answers, as GET /_emulator/edge lists it.
type Route struct {
	Host         string  `json:"host"`
	Kind         string  `json:"kind"` // deployment, domain or redirect
	DeploymentID *string `json:"deployment_id"`
	RedirectTo   *string `json:"redirect_to"`
	Status       string  `json:"status"`
	// Detaching is set on a deleted domain still served until it detaches.
	Detaching bool `json:"detaching,omitempty"`
}

// EdgeRoutes lists what the edge answers now: custom domains (a deleted one until it
// detaches), then deployments, newest first.
func (s *Store) EdgeRoutes() []Route {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Route, 0, len(s.domains)+len(s.detaching)+len(s.deployments))
	domain := func(d *Domain, detaching bool) Route {
		r := Route{Host: d.Hostname, Kind: "domain", Status: d.Status, Detaching: detaching}
		if d.RedirectTo != "" {
			to := d.RedirectTo
			r.Kind, r.RedirectTo = "redirect", &to
		} else if p := s.projects[d.ProjectID]; p != nil && p.ProductionDeploymentID != "" {
			id := p.ProductionDeploymentID
			r.DeploymentID = &id
		}
		return r
	}
	hosts := slices.Sorted(maps.Keys(s.domains))
	for _, h := range hosts {
		out = append(out, domain(s.domains[h], false))
	}
	for i := range s.detaching {
		if d := s.detaching[i].Domain; d != nil {
			out = append(out, domain(d, true))
		}
	}
	s.allIdx.walk(Range{}, func(k Key) bool {
		d := s.deployments[k.ID]
		id := d.ID
		out = append(out, Route{Host: hostOfURL(d.URL), Kind: "deployment", DeploymentID: &id, Status: d.Status})
		return true
	})
	return out
}
