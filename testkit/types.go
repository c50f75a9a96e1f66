package testkit

import (
	"net/url"
	"strconv"

	"github.com/hostemu/hostemu/emulator"
)

// ClockMode says how an emulator's clock moves: ClockReal, ClockManual, ClockAuto or
// ClockScaled(N).
type ClockMode = emulator.ClockMode

// The clock modes, for WithClock.
const (
	// ClockReal moves with the wall clock.
	ClockReal = emulator.ClockReal
	// ClockManual moves only when a test advances it (Advance, Await…), which makes
	// lifecycles exact and instant.
	ClockManual = emulator.ClockManual
	// ClockAuto is for apps that were not written for tests (they poll with sleeps and
	// never call Advance): a manual clock that jumps to the next step of a lifecycle in
	// flight whenever the world has had no request for a moment (20 ms), so an app
	// polling every second sees each step after about one poll, with the same
	// timestamps on every run. The WaitFor methods and Advance work as on a manual clock.
	ClockAuto = emulator.ClockAuto
)

// ClockScaled is the mode of a clock that runs rate times as fast as the wall
// (1 ≤ rate ≤ 10,000): on ClockScaled(100) a 6 s build is ready after 60 ms. Timeouts of
// the WaitFor methods are emulated time.
func ClockScaled(rate float64) ClockMode { return emulator.ClockScaled(rate) }

// FaultSpec is one fault, as InjectFault and POST /_emulator/faults take it.
type FaultSpec = emulator.FaultSpec

// FaultMatch selects the requests a fault applies to; empty fields match everything.
type FaultMatch = emulator.FaultMatch

// FaultDelay is a fixed delay (Min == Max) or a uniform range.
type FaultDelay = emulator.FaultDelay

// FaultStep is one answer of a fault's Then sequence (Pass lets a request through).
type FaultStep = emulator.FaultStep

// FaultPayload is a fault's replacement body: Text as it is, or a JSON value (JSON).
type FaultPayload = emulator.FaultPayload

// FaultBodyValue is the value a FaultMatch.Body path must hold, as JSON
// (FaultBodyValueOf makes one).
type FaultBodyValue = emulator.FaultBodyValue

// FaultBodyValueOf is v as a FaultBodyValue: FaultBodyValueOf("production").
func FaultBodyValueOf(v any) FaultBodyValue { return emulator.FaultBodyValueOf(v) }

// NearMiss is a journaled request that held all but one or two fields of a fault's
// match or of an await's condition, with what it had where it differed (Differs).
type NearMiss = emulator.NearMiss

// NearMissDiffers holds, for each field a near miss did not meet, what the request had
// there.
type NearMissDiffers = emulator.NearMissDiffers

// FaultInfo is a fault as Faults lists it: its spec, id, source and hits, and for a
// fault with no hits the near misses, the recent requests that almost matched it.
type FaultInfo struct {
	FaultSpec
	ID     string `json:"id"`
	Source string `json:"source"` // api, or scenario:<name>
	Hits   int64  `json:"hits"`
	// NearMisses are, for a fault with no hits, up to 5 of the newest 200 journaled
	// requests that held all but one or two fields of its match, closest first.
	NearMisses []NearMiss `json:"near_misses,omitempty"`
}

// Request is one journaled request, as Requests returns it.
type Request = emulator.JournalEntry

// RequestFilter selects journaled requests, as GET /_emulator/requests' query does. Zero
// fields select every request; a bad value (an unknown service, a malformed body match)
// fails the test with the emulator's message.
type RequestFilter struct {
	Method string // any case
	Path   string // `*` wildcards
	// Status is the status answered; 0 selects any (the HTTP filter status=0 selects
	// the requests a fault dropped).
	Status  int
	Service string // "hosting", "cipher" or "edge"
	Scope   string // "read", "deploy", "admin" or "api_key"
	Code    string // the error code answered
	// Since selects the entries whose Seq is greater: read the last Seq, act, then ask
	// for what came after.
	Since uint64
	// Limit keeps the first Limit entries selected (Requests only; 0: all).
	Limit int
	// Body is a JSON-path match on the request body: "target=production",
	// "files[0].path=/index.html", or a path alone for a key that exists.
	Body string
	// Header selects by a header of the request, ResponseHeader by one of its answer
	// (Content-Type, Location, Retry-After, X-RateLimit-*): "Retry-After" for one that
	// is there, "Retry-After:30" or "Content-Type:application/json*" for its value (`*`
	// wildcards). The name is compared in any case.
	Header, ResponseHeader string
}

// query is f as GET /_emulator/requests' query.
func (f RequestFilter) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("method", f.Method)
	set("path", f.Path)
	set("service", f.Service)
	set("scope", f.Scope)
	set("code", f.Code)
	set("body", f.Body)
	set("header", f.Header)
	set("response_header", f.ResponseHeader)
	if f.Status != 0 {
		q.Set("status", strconv.Itoa(f.Status))
	}
	if f.Since != 0 {
		q.Set("since", strconv.FormatUint(f.Since, 10))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// match is f as an await's requests condition.
func (f RequestFilter) match() map[string]any {
	m := map[string]any{"method": f.Method, "path": f.Path, "service": f.Service, "scope": f.Scope, "code": f.Code, "since": f.Since}
	if f.Status != 0 {
		m["status"] = f.Status
	}
	if f.Body != "" {
		m["body"] = f.Body
	}
	if f.Header != "" {
		m["header"] = f.Header
	}
	if f.ResponseHeader != "" {
		m["response_header"] = f.ResponseHeader
	}
	return m
}
