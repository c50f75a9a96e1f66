package emulator

import (
	"context"
	"time"
)

// SetNamespaceClock sets the wall clock that namespaces' idle expiry reads, a test hook
// kept out of the public Options.
func SetNamespaceClock(o *Options, now func() time.Time) { o.namespaceClock = now }

// WaitBodyBytesInFlight blocks until cond holds of the request-body bytes e holds now.
func WaitBodyBytesInFlight(ctx context.Context, e *Emulator, cond func(int64) bool) (int64, error) {
	return e.api.WaitBodyBytesInFlight(ctx, cond)
}

// Evicted is how many idle connections s closed to make room at its cap.
func Evicted(s *Server) int64 { return s.conns.evicted.Load() }

// StallClosed is how many connections s closed because their client stopped reading.
func StallClosed(s *Server) int64 { return s.conns.stallClosed.Load() }

// NamespaceWeight is the namespaces' worlds together, as --max-world-bytes counts them.
func NamespaceWeight(e *Emulator) int64 { return e.ns.Weight() }
