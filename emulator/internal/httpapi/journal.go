package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// record journals an answered public request and logs it at debug.
func (a *API) record(c *gin.Context, info *reqInfo) {
	status := c.Writer.Status()
	if info.errCode == "dropped" || info.errCode == "timeout" {
		status = 0
	}
	e := journal.Entry{
		Method:     c.Request.Method,
		Path:       c.Request.URL.Path,
		Query:      c.Request.URL.RawQuery,
		Status:     status,
		DurationMS: float64(time.Since(info.start).Microseconds()) / 1000,
		ErrorCode:  info.errCode,
		Scope:      string(info.scope),
		Service:    info.service,
		FaultID:    info.faultID,
		Headers:    journal.HeadersOf(c.Request.Header),
	}
	if info.service == serviceCipher && info.authed {
		e.Scope = "api_key"
	}
	if b := info.body; b != nil {
		switch {
		case !b.read && expectsContinue(c.Request):
			// refused before the handler read the body (401, 403, 415, 429, a fault) of
			// a client waiting for 100 Continue: reading it would tell the client to send
			// it, and hold the answer until it came or the body timeout struck
			e.BodyUnread = true
		case !b.eof && b.buf.Len() <= journal.MaxBody && status != 0:
			// answered before the handler read the body: read what the journal keeps
			// of it now
			io.CopyN(io.Discard, b, int64(journal.MaxBody+1-b.buf.Len()))
		}
		e.Body = b.buf.String()
	}
	if info.redact {
		e.Body = redactedPayload(info.payloadChars)
	}
	a.world(c).Record(e)
	if a.log.Enabled(c.Request.Context(), slog.LevelDebug) { // spare the hot path the arguments' allocations
		a.log.Debug("request", "method", e.Method, "path", e.Path, "query", e.Query, "status", status, "service", e.Service,
			"scope", e.Scope, "error_code", e.ErrorCode, "duration_ms", e.DurationMS)
	}
}

// expectsContinue reports whether the client waits for 100 Continue before sending
// its body.
func expectsContinue(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// redactedPayload is what the journal keeps of an /v1/encrypt body: the payload's
// length in characters, or only that there was one when it was never read.
func redactedPayload(chars int) string {
	if chars < 0 {
		return "[redacted]"
	}
	return `{"payload":"[redacted: ` + strconv.Itoa(chars) + ` characters]"}`
}
