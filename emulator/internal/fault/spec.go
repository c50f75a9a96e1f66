// Package fault describes injected faults (the control API's and scenarios' fault
// objects), matches them against requests and decides, with a seeded random source,
// whether one fires.
package fault

import (
	"encoding/json"
	"time"
)

// Match selects the requests a fault applies to. Empty fields match everything.
type Match struct {
	Method  string `json:"method,omitempty" yaml:"method"`
	Path    string `json:"path,omitempty" yaml:"path"`       // `*` wildcards
	Service string `json:"service,omitempty" yaml:"service"` // hosting, cipher or edge
	Host    string `json:"host,omitempty" yaml:"host"`       // the edge's host, `*` wildcards
	Scope   string `json:"scope,omitempty" yaml:"scope"`     // the caller's token scope
	// Operation is an operationId of the hosting description (createDeployment,
	// decrypt): the request is that operation's, by service, method and route.
	Operation string `json:"operation,omitempty" yaml:"operation"`
	// Query holds each named query parameter present with a value matching its glob
	// ("*": present).
	Query map[string]string `json:"query,omitempty" yaml:"query"`
	// Headers holds each named header (names case-insensitive) with a value matching its
	// glob.
	Headers map[string]string `json:"headers,omitempty" yaml:"headers"`
	// Body holds, per JSON path of the request's body ("target", "meta.branch",
	// "files[0].path"), the value there: the journal's body matcher.
	Body map[string]BodyValue `json:"body,omitempty" yaml:"body"`
	// Token is the caller's bearer token, exactly.
	Token string `json:"token,omitempty" yaml:"token"`
}

// Delay is a fixed delay (Min == Max) or a uniform range.
type Delay struct {
	Min time.Duration
	Max time.Duration
}

// Spec is one fault as users write it. Exactly the fields of the fault object in docs/control-api.md.
type Spec struct {
	Match   Match  `json:"match"`
	Status  int    `json:"status,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Delay   *Delay `json:"delay,omitempty"`
	// DelayClock says which clock the delay runs on: "wall" (the default: a delay is
	// the network's, so it takes wall time whatever the emulated clock does) or
	// "emulated" (it takes delay of emulated time: delay/N on a scaled:N clock, and on
	// a manual or auto clock it lasts until the clock has moved that far).
	DelayClock string `json:"delay_clock,omitempty"`
	Drop       bool   `json:"drop,omitempty"`
	RateLimit  bool   `json:"rate_limit,omitempty"`
	// RetryAfter is the Retry-After, in seconds, of a rate_limit fault's 429 (0: the
	// limiter's own figure).
	RetryAfter  int      `json:"retry_after,omitempty"`
	Timeout     bool     `json:"timeout,omitempty"`
	Times       int      `json:"times,omitempty"`
	Probability *float64 `json:"probability,omitempty"`
	// After skips the first After matches: the fault fires from the After+1th.
	After int `json:"after,omitempty"`
	// From and Until bound, on the emulator clock, when the fault fires (zero: open).
	From  time.Time `json:"from,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// For is how long after the fault's activation (added, or its scenario made active)
	// it fires; 0 means no end. It excludes From and Until.
	For Duration `json:"for,omitempty"`
	// Error answers a documented error code of apperr's catalogue with its status,
	// envelope and headers (Retry-After on 429 and 503).
	Error string `json:"error,omitempty"`
	// Headers are added to the answer, injected or real.
	Headers map[string]string `json:"headers,omitempty"`
	// Body replaces the answer's body; the status stays unless Status is given.
	Body *Payload `json:"body,omitempty"`
	// Break is how the wire breaks (one of Breaks); AfterBytes goes with "truncate"
	// (0: half the body) and BytesPerSecond with "slow".
	Break          string `json:"break,omitempty"`
	AfterBytes     int    `json:"after_bytes,omitempty"`
	BytesPerSecond int    `json:"bytes_per_second,omitempty"`
	// Then is a sequence: one answer per firing, in order; the fault is spent after the
	// last. It excludes the answer fields above and times.
	Then []Step `json:"then,omitempty"`
}

// Step is one answer of a fault's then sequence: the fault's own answer fields, or Pass
// to let the request through.
type Step struct {
	Pass       bool              `json:"pass,omitempty"`
	Status     int               `json:"status,omitempty"`
	Code       string            `json:"code,omitempty"`
	Message    string            `json:"message,omitempty"`
	Error      string            `json:"error,omitempty"`
	Delay      *Delay            `json:"delay,omitempty"`
	DelayClock string            `json:"delay_clock,omitempty"`
	Drop       bool              `json:"drop,omitempty"`
	RateLimit  bool              `json:"rate_limit,omitempty"`
	RetryAfter int               `json:"retry_after,omitempty"`
	Timeout    bool              `json:"timeout,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       *Payload          `json:"body,omitempty"`
	// Break, AfterBytes and BytesPerSecond are as the fault's.
	Break          string `json:"break,omitempty"`
	AfterBytes     int    `json:"after_bytes,omitempty"`
	BytesPerSecond int    `json:"bytes_per_second,omitempty"`
}

// Payload is an answer's replacement body: a string written as it is (text/plain), or
// any other JSON value written as JSON (application/json), kept canonical.
type Payload struct {
	JSON bool   // Text is canonical JSON, not a string
	Text string // the string, or the JSON
}

// UnmarshalJSON reads a string or any JSON value.
func (p *Payload) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = Payload{Text: s}
		return nil
	}
	c, err := canonicalJSON(b)
	if err != nil {
		return err
	}
	*p = Payload{JSON: true, Text: c}
	return nil
}

// MarshalJSON writes the string, or the JSON value.
func (p Payload) MarshalJSON() ([]byte, error) {
	if p.JSON {
		return []byte(p.Text), nil
	}
	return json.Marshal(p.Text)
}

// Duration is a fault's "for": a Go duration (or "2d"), written as a string in JSON, as
// delays are.
type Duration time.Duration

// MarshalJSON writes the duration as a string ("2m0s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
