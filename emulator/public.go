package emulator

import (
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/view"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// ClockMode says how the emulator's clock moves: ClockReal, ClockManual, ClockAuto or
// ClockScaled(N).
type ClockMode = clock.Mode

// The clock modes.
const (
	// ClockReal moves with the wall clock.
	ClockReal = clock.Real
	// ClockManual moves only when told (POST /_emulator/clock/advance, await).
	ClockManual = clock.Manual
	// ClockAuto is a manual clock that jumps to the next in-flight transition (a
	// deployment building, a domain verifying, a certificate being issued) whenever its
	// world has been idle for Options.AutoIdle.
	ClockAuto = clock.Auto
)

// ClockScaled is the mode of a clock that runs rate times as fast as the wall
// (1 ≤ rate ≤ 10,000): a 6 s build is ready after 6/rate s.
func ClockScaled(rate float64) ClockMode { return clock.ScaledMode(rate) }

// FaultSpec is one fault as POST /_emulator/faults and scenarios take it.
type FaultSpec = fault.Spec

// FaultMatch selects the requests a fault applies to.
type FaultMatch = fault.Match

// FaultStep is one answer of a fault's Then sequence (Pass lets a request through).
type FaultStep = fault.Step

// FaultPayload is a fault's replacement body: Text written as it is, or, with JSON,
// Text is a JSON value written as JSON.
type FaultPayload = fault.Payload

// FaultBodyValue is the value a FaultMatch.Body path must hold, as JSON: make one with
// FaultBodyValueOf ("production" is FaultBodyValue(`"production"`)).
type FaultBodyValue = fault.BodyValue

// FaultBodyValueOf is v (a string, number, bool, nil, or maps and slices of them) as a
// FaultBodyValue; it panics on a value JSON cannot hold (a channel, a function).
func FaultBodyValueOf(v any) FaultBodyValue {
	b, err := fault.BodyValueOf(v)
	if err != nil {
		panic("emulator.FaultBodyValueOf: " + err.Error())
	}
	return b
}

// FaultDelay is a fixed delay (Min == Max) or a uniform range.
type FaultDelay = fault.Delay

// NearMiss is a journaled request that held all but one or two fields of a fault's
// match or of a journal condition, with what it had in the fields that differed: GET
// /_emulator/faults gives them for each fault with no hits, an await's 408
// await_timeout and an empty journal query for their condition.
type NearMiss = fault.NearMiss

// NearMissDiffers holds, for each field a near miss did not meet, what the request had
// there (a token is never written: "[redacted]", or "" when none was sent).
type NearMissDiffers = fault.Differs

// JournalEntry is one journaled request, as GET /_emulator/requests lists it (and the
// data of a request event). TestJournalEntryHasEveryField holds it to what the journal
// writes.
type JournalEntry struct {
	// Seq numbers the entries of a world's journal from 1; it goes on across a clear of
	// the journal and restarts at a reset.
	Seq        uint64  `json:"seq"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Query      string  `json:"query"`
	Status     int     `json:"status"` // 0 for a request a fault dropped
	DurationMS float64 `json:"duration_ms"`
	// Body is the request body, cut to 4 KiB (BodyTruncated), redacted for the
	// decryption service.
	Body      string `json:"body"`
	ErrorCode string `json:"error_code"`
	Scope     string `json:"scope"`   // the credential's scope, or "api_key"
	Service   string `json:"service"` // hosting, cipher or edge
	Host      string `json:"host,omitempty"`
	// FaultID is the injected fault that fired on the request, if one did.
	FaultID string `json:"fault_id,omitempty"`
	// Headers are the request's headers (credentials masked), by name.
	Headers          JournalHeaders `json:"headers,omitempty"`
	Time             time.Time      `json:"time"`
	BodyTruncated    bool           `json:"body_truncated,omitempty"`
	BodyUnread       bool           `json:"body_unread,omitempty"`
	PathTruncated    bool           `json:"path_truncated,omitempty"`
	QueryTruncated   bool           `json:"query_truncated,omitempty"`
	HeadersTruncated bool           `json:"headers_truncated,omitempty"`
	// Replayed marks an entry that came with a failure bundle.
	Replayed bool `json:"replayed,omitempty"`
	// Response is the answer; nil for a request a fault dropped or timed out.
	Response *JournalResponse `json:"response,omitempty"`
}

// JournalResponse is what the journal keeps of an answer.
type JournalResponse struct {
	Status int `json:"status"`
	// Headers are the answer's Content-Type, Location, Retry-After and X-RateLimit-*
	// headers (Go's canonical names: X-Ratelimit-Remaining; Get takes any case).
	Headers JournalHeaders `json:"headers,omitempty"`
	// Body is the answer's body as written (never gzipped), cut to 4 KiB
	// (BodyTruncated); a decryption-service answer's is "[redacted: N bytes]".
	Body             string `json:"body"`
	BodyTruncated    bool   `json:"body_truncated,omitempty"`
	HeadersTruncated bool   `json:"headers_truncated,omitempty"`
}

// JournalHeaders are a journaled request's headers, by name as sent.
type JournalHeaders map[string]string

// Get is the value of the header name, in any case, or "".
func (h JournalHeaders) Get(name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Coverage is what GET /_emulator/coverage answers: every documented operation and
// answer, lifecycle edge and fault action, with how often each was seen.
type (
	Coverage           = coverage.Report
	CoverageOperation  = coverage.OperationReport
	CoverageResponse   = coverage.ResponseReport
	CoverageTransition = coverage.TransitionReport
	CoverageFault      = coverage.FaultReport
	CoverageTotals     = coverage.Totals
	CoverageTotal      = coverage.Total
)

// MergeCoverage adds coverage reports up (of several emulators or namespaces): counts
// of the same operation, answer, edge and fault action are summed, totals recomputed.
func MergeCoverage(rs ...Coverage) Coverage { return coverage.Merge(rs...) }

// CoverageIgnore is a coverage file's ignore list (CoverageIgnore.Apply leaves the rows
// its rules name out of a report's totals, marked ignored); CoverageRule is one rule.
// See docs/coverage.md.
type (
	CoverageIgnore = coverage.Ignore
	CoverageRule   = coverage.Rule
)

// CoverageFile is the coverage file hostemu coverage reads from the working directory.
const CoverageFile = coverage.ConfigFile

// ReadCoverageIgnore reads a coverage file's ignore list: path "" is CoverageFile in the
// working directory, which may be absent (nothing ignored). Problems name the file,
// line and column, and the closest known key, code, operation or edge.
func ReadCoverageIgnore(path string) (CoverageIgnore, error) { return coverage.ReadConfig(path) }

// The JSON shapes the APIs answer with, for tests that decode answers.
type (
	// Deployment is the full deployment object (GET /v1/deployments/{id}).
	Deployment = view.Deployment
	// DeploymentCreated is the answer to POST /v1/deployments.
	DeploymentCreated = view.DeploymentCreated
	// DeploymentList is a page of GET /v1/deployments.
	DeploymentList = view.DeploymentList
	// Project is a project as GET /v1/projects lists it.
	Project = view.Project
	// ProjectList is a page of GET /v1/projects.
	ProjectList = view.ProjectList
	// Domain is a custom domain as the API answers it.
	Domain = view.Domain
	// DomainList is a page of a project's domains.
	DomainList = view.DomainList
	// LogPage is a page of build logs.
	LogPage = view.LogPage
	// Promotion is the answer to a promote.
	Promotion = view.Promotion
	// DomainDeleted is the answer to DELETE /v1/projects/{id}/domains/{hostname}.
	DomainDeleted = view.DomainDeleted
	// Upload is the answer to POST /v1/files.
	Upload = view.Upload
	// Timestamp is a time as hostemu writes it: RFC 3339 UTC with three fractional
	// digits. time.Time(ts) converts it.
	Timestamp = state.Timestamp
)

// The JSON shapes of the control API's answers that have a type of their own.
type (
	// ClockView is the clock as GET and PUT /_emulator/clock, POST
	// /_emulator/clock/advance and POST /_emulator/reset answer it.
	ClockView = world.ClockView
	// AwaitResult is the answer to POST /_emulator/await: what held, and when.
	AwaitResult = world.AwaitResult
	// Token is a hosting token as POST /_emulator/tokens mints it.
	Token = state.Token
)
