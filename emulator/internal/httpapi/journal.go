package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/transport"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// record journals an answered request (public or edge) and logs it at debug.
func (a *API) record(ex *exchange, r *http.Request) {
	status := ex.status
	if ex.errCode == "dropped" || ex.errCode == "timeout" {
		status = 0
	}
	// times the request and, for a real clock, dates its entry (RecordAt): the start's
	// reading moved on by the monotonic clock, one reading (time.Since) where time.Now
	// makes two, the wall's and the monotonic's
	end := ex.start.Add(time.Since(ex.start))
	e := journal.Entry{
		Method:     r.Method,
		Path:       ex.class.Path, // as the router reads it: dpl_x%2Fpromote is no promote
		Query:      r.URL.RawQuery,
		Status:     status,
		DurationMS: float64(end.Sub(ex.start).Microseconds()) / 1000,
		ErrorCode:  ex.errCode,
		Scope:      string(ex.scope),
		Service:    ex.class.Kind.service(),
		FaultID:    ex.faultID,
	}
	e.SetToken(ex.bearerToken(r)) // as faults read it (faultRequest); before the headers, which may redact it
	if transport.Served(r) && ex.class.Kind != KindTunnel {
		// net/http's own map of a request off hostemu's listeners, read for nothing
		// else after this: the journal may keep it (its credentials redacted in it), to
		// be made into the entry's headers when read
		e.SetServedRequestHeaders(r.Header, r.Host)
	} else {
		e.SetRequestHeaders(r.Header) // a caller's request, which it may reuse: copied now
	}
	switch ex.class.Kind {
	case KindEdge:
		e.Host = ex.class.Host
	case KindTunnel:
		e.Host, e.Path, e.Query = ex.class.Host, r.Host, ""
	case KindCipher:
		if ex.authed {
			e.Scope = "api_key"
		}
	}
	if b := ex.body; b != nil {
		switch {
		case !b.read && expectsContinue(r):
			// refused before the handler read the body (401, 403, 415, 429, a fault) of
			// a client waiting for 100 Continue: reading it would tell the client to send
			// it, and hold the answer until it came or the body timeout struck
			e.BodyUnread = true
		case !b.eof && len(b.buf) <= journal.MaxBody && status != 0:
			// answered before the handler read the body: read what the journal keeps
			// of it now
			io.CopyN(io.Discard, b, int64(journal.MaxBody+1-len(b.buf)))
		}
		if w := ex.whole; b.eof && len(w) == len(b.buf) && cap(w) <= journal.MaxBody && string(w) == string(b.buf) {
			// the handler's own buffer of the same bytes, never changed, and holding no
			// more than MaxBody bytes (MaxEntryBytes stands): kept as it is, the copy spared
			e.SetKeptBody(unsafe.String(unsafe.SliceData(w), len(w)))
		} else {
			// the pooled exchange's buffer, seen as a string without a copy: Record copies
			// every string it keeps before it returns, and the buffer is reused only after
			e.Body = unsafe.String(unsafe.SliceData(b.buf), len(b.buf))
		}
	}
	if ex.redact {
		e.Body = redactedPayload(ex.payloadChars)
	}
	// the answer's headers as they were sent (headSent), or, when no head went out
	// through the exchange (a break held it back and sent it at its end), the map as
	// it is now, which is what went out
	var h http.Header
	if !ex.sent.Taken() {
		h = ex.Header()
	}
	switch {
	case status == 0:
	case ex.answerShared: // bytes never modified (a rendered deployment): no copy
		e.SetSharedResponse(status, h, unsafe.String(unsafe.SliceData(ex.shared), len(ex.shared)))
	default:
		e.SetResponse(status, h, ex.answerBody())
	}
	if status != 0 && ex.sent.Taken() {
		e.SetAnswerHead(&ex.sent)
	}
	ex.w.RecordAt(e, end)
	if a.log.Enabled(r.Context(), slog.LevelDebug) { // spare the hot path the arguments' allocations
		ns := ex.w.Namespace()
		if ns != "" {
			ns = namespace.Prefix + ns
		}
		a.log.Debug("request", "method", e.Method, "path", e.Path, "query", e.Query, "status", status, "service", e.Service,
			"route", ex.route, "namespace", ns, "host", e.Host,
			"scope", e.Scope, "error_code", e.ErrorCode, "duration_ms", e.DurationMS)
	}
}

// expectsContinue reports whether the client waits for 100 Continue before sending
// its body.
func expectsContinue(r *http.Request) bool {
	return strings.EqualFold(headerOf(r.Header, "Expect"), "100-continue")
}

// redactedPayload is what the journal keeps of an /v1/encrypt body: the payload's
// length in characters, or only that there was one when it was never read.
func redactedPayload(chars int) string {
	if chars < 0 {
		return "[redacted]"
	}
	return `{"payload":"[redacted: ` + strconv.Itoa(chars) + ` characters]"}`
}
