package world

import (
	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// The world's changes as events (GET /_emulator/events). Each emitter below is called
// where the change happens, in one line, and builds its data only while someone
// listens: the request path journals every request and must not pay for events nobody
// reads.

// Event types of the stream.
const (
	EventDeployment = "deployment" // a deployment's status changed, or it was created or promoted
	EventDomain     = "domain"     // a domain's status changed, or it was added or deleted
	EventRequest    = "request"    // a request was journaled
	EventJournal    = "journal"    // the journal was cleared
	EventFault      = "fault"      // a fault fired, was added or removed
	EventClock      = "clock"      // the clock moved or switched mode
	EventScenario   = "scenario"   // the active scenario switched or scenario files reloaded
	EventToken      = "token"      // a hosting token was minted or revoked
	EventReset      = "reset"      // the world was reset or a state imported: read it all again
)

// EventTypes are the types of the stream, for a subscriber's filter.
var EventTypes = []string{EventDeployment, EventDomain, EventRequest, EventJournal, EventFault, EventClock, EventScenario, EventToken, EventReset}

// RecentEvents is how many of its recent changes (every event type but request, which
// the journal holds) a world remembers for a failure bundle's events.ndjson.
const RecentEvents = 1000

// Events is the hub the world's changes are emitted to.
func (w *World) Events() *events.Hub { return w.events }

// DeploymentEvent is the data of a deployment event.
type DeploymentEvent struct {
	Change    string           `json:"change"` // "status", "created", "promoted" or "forced"
	ID        string           `json:"id"`
	ProjectID string           `json:"project_id"`
	Status    string           `json:"status"`
	Error     *state.ErrorInfo `json:"error"`
	At        state.Timestamp  `json:"at"`
}

func (w *World) emitDeployment(change string, d state.Deployment) {
	if w.events.Wants(EventDeployment) {
		w.events.Emit(EventDeployment, DeploymentEvent{Change: change, ID: d.ID, ProjectID: d.ProjectID, Status: d.Status, Error: d.Error, At: state.Timestamp(w.clock.Now())})
	}
}

// DomainEvent is the data of a domain event.
type DomainEvent struct {
	Change    string           `json:"change"` // "status", "added", "deleted", "detached", "forced" or "renewal_failed"
	Hostname  string           `json:"hostname"`
	ProjectID string           `json:"project_id,omitempty"`
	Status    string           `json:"status,omitempty"`
	TLS       string           `json:"tls_status,omitempty"`
	Error     *state.ErrorInfo `json:"error,omitempty"`
	At        state.Timestamp  `json:"at"`
}

func (w *World) emitDomain(change string, d state.Domain) {
	if w.events.Wants(EventDomain) {
		w.events.Emit(EventDomain, DomainEvent{Change: change, Hostname: d.Hostname, ProjectID: d.ProjectID, Status: d.Status, TLS: d.TLS.Status, Error: d.Error, At: state.Timestamp(w.clock.Now())})
	}
}

// emitRenewalFailed tells that a domain's certificate renewal failed: a domain event,
// change "renewal_failed", tls "error", with the scenario's error (renewal_failed by
// default) in error.
func (w *World) emitRenewalFailed(d state.Domain, e *state.ErrorInfo) {
	info := &state.ErrorInfo{Code: "renewal_failed", Message: "the certificate for " + d.Hostname + " could not be renewed"}
	if e != nil {
		info = &state.ErrorInfo{Code: e.Code, Message: e.Message}
	}
	d.Error = info
	w.emitDomain("renewal_failed", d)
}

// eventBody is how much of a request body a request event carries; the journal has
// the rest.
const eventBody = 1024

// emitRequest emits a request event: the entry without its request headers (as
// before the journal kept them), its bodies cut to eventBody.
func (w *World) emitRequest(kept *journal.Entry) {
	if w.events.Wants(EventRequest) {
		e := *kept
		e.Headers, e.HeadersTruncated = nil, false
		if len(e.Body) > eventBody {
			e.Body, e.BodyTruncated = e.Body[:eventBody], true
		}
		if r := &e.Response; len(r.Body) > eventBody {
			r.Body, r.BodyTruncated = r.Body[:eventBody], true
		}
		w.events.Emit(EventRequest, e)
	}
}

// FaultEvent is the data of a fault event.
type FaultEvent struct {
	Change string `json:"change"` // "hit", "added", "removed" or "cleared"
	ID     string `json:"id,omitempty"`
	Hits   int64  `json:"hits,omitempty"`
}

func (w *World) emitFault(change, id string, hits int64) {
	if w.events.Wants(EventFault) {
		w.events.Emit(EventFault, FaultEvent{Change: change, ID: id, Hits: hits})
	}
}

func (w *World) emitFaultHit(act fault.Action, ok bool) {
	if ok {
		w.emitFault("hit", act.FaultID, act.Hits)
	}
}

func (w *World) emitClock() {
	if w.events.Wants(EventClock) {
		w.events.Emit(EventClock, w.Clock())
	}
}

func (w *World) emitScenario(change string) {
	if w.events.Wants(EventScenario) {
		w.events.Emit(EventScenario, map[string]string{"change": change, "active": w.Scenario().Name})
	}
}

func (w *World) emitToken(change string, scope state.Scope) {
	if w.events.Wants(EventToken) {
		w.events.Emit(EventToken, map[string]string{"change": change, "scope": string(scope)})
	}
}

func (w *World) emit(typ, change string) {
	if w.events.Wants(typ) {
		w.events.Emit(typ, map[string]any{"change": change, "at": state.Timestamp(w.clock.Now())})
	}
}
