package journal

import "github.com/hostemu/hostemu/emulator/internal/fault"

// Faults match bodies with the journal's matcher: one implementation for faults,
// journal queries and awaits. The fault package cannot import this one (it is imported
// by it), so the matcher is handed over here.
func init() {
	fault.ParseBody = func(s string) (fault.BodyMatcher, error) { return ParseBodyMatch(s) }
}
