package emulator

import (
	"context"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/world"
)

// SetNamespaceClock sets the wall clock that namespaces' idle expiry reads, a test hook
// kept out of the public Options.
func SetNamespaceClock(o *Options, now func() time.Time) { o.namespaceClock = now }

// SetCompactMin sets the --state log size that starts a compaction whatever the
// snapshot's size.
func SetCompactMin(o *Options, n int64) { o.compactMin = n }

// SetImportWait sets how long an import waits for the one under way.
func SetImportWait(o *Options, d time.Duration) { o.importWait = d }

// WaitBodyBytesInFlight blocks until cond holds of the request-body bytes e holds now.
func WaitBodyBytesInFlight(ctx context.Context, e *Emulator, cond func(int64) bool) (int64, error) {
	return e.api.WaitBodyBytesInFlight(ctx, cond)
}

// Evicted is how many idle connections s closed to make room at its cap.
func Evicted(s *Server) int64 { return s.conns.Evicted() }

// StallClosed is how many connections s closed because their client stopped reading.
func StallClosed(s *Server) int64 { return s.conns.StallClosed() }

// NamespaceWeight is the namespaces' worlds together, as --max-world-bytes counts them.
func NamespaceWeight(e *Emulator) int64 { return e.ns.Weight() }

// World is e's default world, for tests that reach past HTTP.
func World(e *Emulator) *world.World { return e.world }

// WaitStateExports blocks until cond holds of e's state exports under way and the bytes
// their shared encodings hold.
func WaitStateExports(ctx context.Context, e *Emulator, cond func(readers int, bytes int64) bool) (int, int64, error) {
	return e.api.WaitStateExports(ctx, cond)
}
