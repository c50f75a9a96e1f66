package emulator

import (
	"time"

	"github.com/hostemu/hostemu/emulator/internal/httpapi"
	"github.com/hostemu/hostemu/emulator/internal/transport"
)

// Default limits: what Limits' zero fields mean. docs/security.md ("Limits") lists them
// and what a client sees beyond each.
const (
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultIdleTimeout          = 60 * time.Second
	DefaultBodyReadTimeout      = 10 * time.Second
	DefaultMinBodyRate          = 16 << 10 // bytes per second
	DefaultMaxConnections       = 4096
	DefaultWriteStallTimeout    = 10 * time.Second
	DefaultMaxBodyBytesInFlight = httpapi.DefaultBodyBytesInFlight
	DefaultMaxStateBytes        = httpapi.DefaultMaxStateBytes
)

// Limits bound what clients can make hostemu hold: time, connections and memory. The
// zero value of each field means its default. The timeouts and the connection cap apply
// to the servers Listen makes; the byte budgets to Handler wherever it is served.
type Limits struct {
	// ReadHeaderTimeout is how long a connection may take to send a request's headers.
	ReadHeaderTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next request.
	IdleTimeout time.Duration
	// BodyReadTimeout is how long a request body may take before MinBodyRate applies:
	// a body must have arrived within BodyReadTimeout + bytes/MinBodyRate.
	BodyReadTimeout time.Duration
	// MinBodyRate is the slowest a request body may arrive, in bytes per second.
	MinBodyRate int64
	// MaxConnections caps the open connections across all listeners (at most the
	// file-descriptor limit less a reserve), CONNECT tunnels included. At the cap, the
	// connection whose client has stopped reading the longest (a write blocked for a
	// tenth of WriteStallTimeout) is closed to make room, however many there are, else
	// the one idle the longest (between requests, a tunnel's included); with none of
	// those, new clients wait for a free slot or for a write to count as stalled.
	MaxConnections int
	// WriteStallTimeout bounds one write to a client: a connection whose client has not
	// taken a single write's bytes for this long (it stopped reading) is closed, whatever
	// the cap. One write is at most 32 KiB, so a client reading slower than about 3 KiB/s
	// for the default's 10 s is cut.
	WriteStallTimeout time.Duration
	// MaxBodyBytesInFlight bounds the bytes of request bodies held at once across all
	// requests; a request that would go over gets 503 service_unavailable.
	MaxBodyBytesInFlight int64
	// MaxStateBytes bounds a PUT /_emulator/state body; beyond, 413 payload_too_large.
	MaxStateBytes int64
	// MaxEventStreams bounds the GET /_emulator/events streams open at once, across every
	// namespace (64 when 0); beyond, 429 rate_limited.
	MaxEventStreams int
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	def(&l.BodyReadTimeout, DefaultBodyReadTimeout)
	def(&l.WriteStallTimeout, DefaultWriteStallTimeout)
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.MaxBodyBytesInFlight <= 0 {
		l.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if l.MaxStateBytes <= 0 {
		l.MaxStateBytes = DefaultMaxStateBytes
	}
	return l
}

// httpLimits is the HTTP layer's part.
func (l Limits) httpLimits() httpapi.Limits {
	return httpapi.Limits{BodyBytesInFlight: l.MaxBodyBytesInFlight, StateBytes: l.MaxStateBytes, MaxSubscribers: l.MaxEventStreams}
}

// transport is the connections' part.
func (l Limits) transport() transport.Limits {
	return transport.Limits{ReadHeaderTimeout: l.ReadHeaderTimeout, IdleTimeout: l.IdleTimeout, BodyReadTimeout: l.BodyReadTimeout,
		MinBodyRate: l.MinBodyRate, MaxConnections: l.MaxConnections, WriteStallTimeout: l.WriteStallTimeout}
}
