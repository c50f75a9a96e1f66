package emulator

import (
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// ClockMode says how the emulator's clock moves: ClockReal or ClockManual.
type ClockMode = clock.Mode

// The clock modes.
const (
	// ClockReal moves with the wall clock.
	ClockReal = clock.Real
	// ClockManual moves only when told (POST /_emulator/clock/advance, await).
	ClockManual = clock.Manual
)

// ParseClockMode reads "real" or "manual".
func ParseClockMode(s string) (ClockMode, error) { return clock.ParseMode(s) }

// FaultSpec is one fault as POST /_emulator/faults and scenarios take it.
type FaultSpec = fault.Spec

// FaultMatch selects the requests a fault applies to.
type FaultMatch = fault.Match

// FaultDelay is a fixed delay (Min == Max) or a uniform range.
type FaultDelay = fault.Delay

// JournalEntry is one journaled request, as GET /_emulator/requests lists it.
type JournalEntry = journal.Entry

// JournalFilter selects journal entries by method and path (with * wildcards).
type JournalFilter = journal.Filter
