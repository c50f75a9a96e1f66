package testkit

import "github.com/hostemu/hostemu/emulator"

// ClockMode says how an emulator's clock moves: ClockReal or ClockManual.
type ClockMode = emulator.ClockMode

// The clock modes, for WithClock.
const (
	// ClockReal moves with the wall clock.
	ClockReal = emulator.ClockReal
	// ClockManual moves only when a test advances it (Advance, Await…), which makes
	// lifecycles exact and instant.
	ClockManual = emulator.ClockManual
)

// FaultSpec is one fault, as InjectFault and POST /_emulator/faults take it.
type FaultSpec = emulator.FaultSpec

// FaultMatch selects the requests a fault applies to; empty fields match everything.
type FaultMatch = emulator.FaultMatch

// FaultDelay is a fixed delay (Min == Max) or a uniform range.
type FaultDelay = emulator.FaultDelay

// Request is one journaled request, as Requests returns it.
type Request = emulator.JournalEntry

// RequestFilter selects journaled requests by method and path (`*` wildcards).
type RequestFilter = emulator.JournalFilter
