package state

import (
	"slices"
	"strings"
)

// Change is one mutation of a Store, as its hook sees it: the changed items as they are
// after the change, never the whole state (but for Load). Each field set is applied on
// its own, so replaying a change puts items rather than re-running an operation.
type Change struct {
	// Seq is the store's change count after this change (Store.Changes).
	Seq uint64 `json:"-"`
	// Load is the whole new state after a Load: a copy of the lists the store keeps,
	// safe to read after the lock is released. Such a change carries nothing else.
	Load *Snapshot `json:"-"`

	Deployment    *Deployment   `json:"deployment,omitempty"`     // created or updated
	Project       *Project      `json:"project,omitempty"`        // updated (production pointer)
	Domain        *Domain       `json:"domain,omitempty"`         // added or updated
	DomainDeleted string        `json:"domain_deleted,omitempty"` // hostname no longer attached
	Detaching     *[]Detachment `json:"detaching,omitempty"`      // the whole list after the change
	Token         *Token        `json:"token,omitempty"`          // added or rescoped
	Revoked       string        `json:"revoked,omitempty"`        // token removed
	File          string        `json:"file,omitempty"`           // digest uploaded
	Content       []byte        `json:"content,omitempty"`        // what was uploaded under File
}

// SetHook makes fn receive every change from now on, in order, under the store's write
// lock: fn must be quick and must not call the store. A nil fn stops it.
func (s *Store) SetHook(fn func(Change)) {
	s.mu.Lock()
	s.hook = fn
	s.mu.Unlock()
}

// changed counts a change and hands it to the hook. Called with mu held for writing,
// by every mutator at the point of its change, so that no change goes unrecorded.
func (s *Store) changed(c Change) {
	c.Seq = s.changes.Add(1)
	if s.hook != nil {
		s.hook(c)
	}
	s.woken.Notify()
}

// ExportSeq is Export with the change count it reflects, read under the same lock: a
// snapshot that replayed changes after Seq bring up to date.
func (s *Store) ExportSeq() (Snapshot, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.exportLocked(), s.changes.Load()
}

// Replay applies changes, in order, to snap (which it takes over) and returns the
// result: how a state saved at some change count is brought up to a later one. Every
// change puts or removes whole items, so replaying one twice does no harm.
func Replay(snap Snapshot, changes []Change) Snapshot {
	if len(changes) == 0 {
		return snap
	}
	deps := make(map[string]int, len(snap.Deployments))
	for i, d := range snap.Deployments {
		deps[d.ID] = i
	}
	projects := make(map[string]int, len(snap.Projects))
	for i, p := range snap.Projects {
		projects[p.ID] = i
	}
	domains := make(map[string]*Domain, len(snap.Domains))
	for i := range snap.Domains {
		domains[snap.Domains[i].Hostname] = &snap.Domains[i]
	}
	tokens := make(map[string]Token, len(snap.Tokens))
	for _, t := range snap.Tokens {
		tokens[t.Token] = t
	}
	files := make(map[string]bool, len(snap.Files))
	for _, f := range snap.Files {
		files[f] = true
	}
	uploaded := make(map[string]bool, len(snap.Uploads))
	for _, u := range snap.Uploads {
		uploaded[u.Digest] = true
	}
	for _, c := range changes {
		if d := c.Deployment; d != nil {
			if i, ok := deps[d.ID]; ok {
				snap.Deployments[i] = *d
			} else {
				deps[d.ID] = len(snap.Deployments)
				snap.Deployments = append(snap.Deployments, *d)
			}
		}
		if p := c.Project; p != nil {
			if i, ok := projects[p.ID]; ok {
				snap.Projects[i] = *p
			}
		}
		if d := c.Domain; d != nil {
			dc := *d
			domains[d.Hostname] = &dc
		}
		if c.DomainDeleted != "" {
			delete(domains, c.DomainDeleted)
		}
		if c.Detaching != nil {
			snap.Detaching = slices.Clone(*c.Detaching)
		}
		if t := c.Token; t != nil {
			tokens[t.Token] = *t
		}
		if c.Revoked != "" {
			delete(tokens, c.Revoked)
		}
		if c.File != "" {
			files[c.File] = true
			if c.Content != nil && !uploaded[c.File] {
				uploaded[c.File] = true
				snap.Uploads = append(snap.Uploads, Upload{Digest: c.File, Content: c.Content})
			}
		}
	}
	snap.Domains = snap.Domains[:0:0]
	for _, d := range domains {
		snap.Domains = append(snap.Domains, *d)
	}
	slices.SortFunc(snap.Domains, func(a, b Domain) int { return strings.Compare(a.Hostname, b.Hostname) })
	snap.Tokens = snap.Tokens[:0:0]
	for _, t := range tokens {
		snap.Tokens = append(snap.Tokens, t)
	}
	sortTokens(snap.Tokens)
	snap.Files = snap.Files[:0:0]
	for f := range files {
		snap.Files = append(snap.Files, f)
	}
	slices.Sort(snap.Files)
	return snap
}
