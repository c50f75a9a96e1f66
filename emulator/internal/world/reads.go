package world

import (
	"maps"
	"slices"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Every read runs the transitions due by now first, so what it returns is exact
// whatever the background goroutine's latency.

// Project returns a project by id.
func (w *World) Project(id string) (state.Project, error) {
	w.fireDue()
	return w.store.Project(id)
}

// Projects lists projects newest first after the cursor key.
func (w *World) Projects(after *state.Key, limit int) ([]state.Project, *state.Key) {
	w.fireDue()
	return w.store.Projects(after, limit)
}

// Deployments lists deployments newest first, filtered by q.
func (w *World) Deployments(q state.DeploymentQuery) ([]state.Deployment, *state.Key, error) {
	w.fireDue()
	return w.store.Deployments(q)
}

// Deployment returns a deployment with its project's environment and whether it is the
// project's production deployment, read at one instant: what a full deployment object
// needs.
func (w *World) Deployment(id string) (d state.Deployment, projectEnv map[string]string, production bool, err error) {
	w.fireDue()
	return w.store.DeploymentWithEnv(id)
}

// Version is the state's change count after the transitions due by now have happened:
// what a read made right after it sees is the state as of that count, so an answer
// rendered from it may be kept and served again while Version has not moved.
func (w *World) Version() uint64 { return w.VersionAt(time.Time{}) }

// VersionAt is Version for a caller that has just read the machine's time (read, as
// clock.NowAt takes it: the request's start), which decides what is due.
func (w *World) VersionAt(read time.Time) uint64 {
	w.sched.FireDueAt(read)
	return w.store.Changes()
}

// Domains lists a project's domains newest first.
func (w *World) Domains(projectID string, after *state.Key, limit int) ([]state.Domain, *state.Key, error) {
	w.fireDue()
	return w.store.Domains(projectID, after, limit)
}

// Domain returns a domain by hostname (as given: it is normalized first).
func (w *World) Domain(hostname string) (state.Domain, error) {
	w.fireDue()
	host, err := domainHost(hostname)
	if err != nil {
		return state.Domain{}, err
	}
	return w.store.Domain(host)
}

// domainHost normalizes a hostname a request names a domain by. One that no domain
// can have is domain_not_found, named as given (not as the empty string).
func domainHost(hostname string) (string, error) {
	host, ok := state.NormalizeHostname(hostname, true)
	if !ok {
		return "", apperr.Errorf(apperr.DomainNotFound, "domain %q not found", hostname)
	}
	return host, nil
}

// ChangesNow runs the transitions due and counts the state's changes: an export taken
// at this count is the state now, so exports at one count may share one encoding.
func (w *World) ChangesNow() uint64 {
	w.fireDue()
	return w.store.Changes()
}

// Export returns the whole state, uploaded file contents included.
func (w *World) Export() state.Snapshot {
	w.fireDue()
	snap := w.store.Export()
	snap.Uploads = w.uploads()
	return snap
}

// uploads are the uploaded contents, by digest.
func (w *World) uploads() []state.Upload {
	files := w.files.Snapshot()
	out := make([]state.Upload, 0, len(files))
	for _, digest := range slices.Sorted(maps.Keys(files)) {
		out = append(out, state.Upload{Digest: digest, Content: files[digest]})
	}
	return out
}

// Tokens lists the hosting tokens, by scope then token.
func (w *World) Tokens() []state.Token { return w.store.Tokens() }

// CipherAPIKeys lists the decryption service's API keys.
func (w *World) CipherAPIKeys() []string { return w.store.Cipher().APIKeys }

// Pending is the number of scheduled transitions not yet fired: one per lifecycle in
// flight (its next step; the steps after it are scheduled as it fires; one ended by a
// forced status until its step comes), and the renewals and detachments to come.
func (w *World) Pending() int { return w.sched.Len() }

// JournalBytes is what the journal holds now, in bytes (bounded by its size times
// journal.MaxEntryBytes).
func (w *World) JournalBytes() int64 { return w.journal.Bytes() }

// JournalEvaluations counts the entries the journal's queries, counts and awaits have
// evaluated a filter on: the work they did, which the tests of their bound read.
func (w *World) JournalEvaluations() uint64 { return w.journal.Evaluations() }
