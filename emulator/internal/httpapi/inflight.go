package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/notify"
	"github.com/hostemu/hostemu/emulator/internal/transport"
)

// DefaultBodyBytesInFlight is the budget of request-body bytes held across all requests
// when Limits.BodyBytesInFlight is 0.
const DefaultBodyBytesInFlight = 256 << 20

// Limits bound what clients can make the HTTP layer hold.
type Limits struct {
	// BodyBytesInFlight bounds the bytes of request bodies held at once across all
	// requests (DefaultBodyBytesInFlight when 0); beyond it, 503 service_unavailable.
	BodyBytesInFlight int64
	// StateBytes bounds a PUT /_emulator/state body (DefaultMaxStateBytes when 0).
	StateBytes int64
	// MaxSubscribers bounds the event streams open at once across every world
	// (DefaultMaxSubscribers when 0); beyond it, 429.
	MaxSubscribers int
}

func (l Limits) maxSubscribers() int {
	if l.MaxSubscribers <= 0 {
		return DefaultMaxSubscribers
	}
	return l.MaxSubscribers
}

func (l Limits) bodyBytesInFlight() int64 {
	if l.BodyBytesInFlight <= 0 {
		return DefaultBodyBytesInFlight
	}
	return l.BodyBytesInFlight
}

func (l Limits) stateBytes() int64 {
	if l.StateBytes <= 0 {
		return DefaultMaxStateBytes
	}
	return l.StateBytes
}

// errBodyBudget is a body read refused because the budget is spent.
var errBodyBudget = errors.New("the budget of request-body bytes in flight is spent")

// budget counts request-body bytes held across all requests, up to max.
type budget struct {
	mu      sync.Mutex    // guards used
	used    int64         // bytes held now
	max     int64         // bytes held at most
	changed notify.Signal // used moved
}

func newBudget(max int64) *budget { return &budget{max: max} }

// acquire takes n bytes of the budget, or none and false when fewer are left.
func (b *budget) acquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.max-b.used {
		return false
	}
	b.used += n
	b.changed.Notify()
	return true
}

func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.changed.Notify()
}

// waitUsed blocks until cond holds of the bytes held, or ctx ends; for tests.
func (b *budget) waitUsed(ctx context.Context, cond func(int64) bool) (int64, error) {
	for {
		ch := b.changed.Next()
		b.mu.Lock()
		used := b.used
		b.mu.Unlock()
		if cond(used) {
			return used, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return used, ctx.Err()
		}
	}
}

// WaitBodyBytesInFlight blocks until cond holds of the request-body bytes held now, or
// ctx ends, and returns them. Tests use it to know an upload is under way.
func (a *API) WaitBodyBytesInFlight(ctx context.Context, cond func(int64) bool) (int64, error) {
	return a.bodies.waitUsed(ctx, cond)
}

// freeBodyBytes is how much of each body is not charged to the budget: a normal
// client's small JSON bodies are never refused because uploads hold the budget. It is
// bounded by the connection cap (4,096 × 16 KiB = 64 MiB).
const freeBodyBytes = 16 << 10

// meteredBody is a request body whose bytes count against the budget until the request
// is answered. readBody reserves the capacity of its buffer itself; any other reader
// (the streamed state import) is charged for each byte it reads.
type meteredBody struct {
	r     io.ReadCloser
	b     *budget
	taken int64 // bytes of the request, free ones included
	held  int64 // bytes charged to the budget
	// never is set when a charge was refused that the request could never get: with
	// what it holds, more than the whole budget (413, not "retry in a second")
	never bool
}

// reserve charges n more bytes to the request, past its first freeBodyBytes.
func (m *meteredBody) reserve(n int64) bool {
	charge := min(n, max(m.taken+n-freeBodyBytes, 0))
	if charge > 0 && !m.b.acquire(charge) {
		m.never = m.held+charge > m.b.max
		return false
	}
	m.taken += n
	m.held += charge
	return true
}

func (m *meteredBody) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if n > 0 && !m.reserve(int64(n)) {
		return 0, errBodyBudget
	}
	return n, err
}

func (m *meteredBody) Close() error { return m.r.Close() }

// prepareBody readies a request's body for the pipeline and its handler, on a shallow
// copy of r (net/http must find its own body unchanged after the handler, to tell a
// body never asked for — a refused Expect: 100-continue request: close the connection,
// do not wait for it — from one to discard); a request a listener's body deadline
// already copied (transport.Copied) is changed in place. From the reader's end:
//
//   - the journal's copy of the first journal.MaxBody bytes (journaled requests whose
//     body is no secret; a decryption-service body is redacted instead);
//   - gzip decoding (Content-Encoding: gzip or x-gzip): every size limit and the budget
//     apply to the decoded bytes, so a gzip bomb hits 413; any other coding is refused
//     with 415 by the body's reader, before it reads (see unsupportedEncoding).
//
// It reads nothing: a request refused before its handler (401, 429, a fault) has its
// body read for the journal afterwards, unless its client waits for 100 Continue.
func (a *API) prepareBody(ex *exchange, r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody || ex.prepared {
		return r
	}
	ex.prepared = true
	if !transport.Copied(r) { // the listener's copy of the server's request is ours to change
		r = r.WithContext(r.Context())
	}
	if isGzip(headerOf(r.Header, "Content-Encoding")) {
		r.Body = &gunzipBody{r: r.Body}
		r.Header.Del("Content-Encoding")
		r.ContentLength = -1 // the declared length was the encoded one
	}
	switch {
	case ex.class.Secret:
		ex.redact = true // plaintext never reaches the journal
	case ex.journaled:
		ex.capt.r = r.Body
		ex.body = &ex.capt
		r.Body = ex.body
	}
	return r
}

// meterBody counts a body's bytes against the budget of bytes in flight until the
// request is answered: the returned meter's held bytes are given back then.
func (a *API) meterBody(ex *exchange, r *http.Request) *meteredBody {
	ex.meter = meteredBody{r: r.Body, b: a.bodies} // pooled with the exchange: no request outlives it
	r.Body = &ex.meter
	return &ex.meter
}

// busy is the answer to a body that would go over the budget: 503, retry in a second;
// or, when the body alone would take more than the whole budget (it can never fit),
// 413 naming it.
func busy(c *gin.Context) error {
	if m, ok := c.Request.Body.(*meteredBody); ok && m.never {
		return apperr.Errorf(apperr.PayloadTooLarge, "the body, decoded, takes more than the %d bytes --max-body-bytes-in-flight allows all requests together: it can never be taken", m.b.max)
	}
	c.Header("Retry-After", "1")
	return apperr.New(apperr.ServiceUnavailable, "hostemu holds its maximum of request-body bytes in flight (--max-body-bytes-in-flight); retry in a second")
}
