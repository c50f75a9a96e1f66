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
}

// Duration is a fault's "for": a Go duration (or "2d"), written as a string in JSON, as
// delays are.
type Duration time.Duration

// MarshalJSON writes the duration as a string ("2m0s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
