package httpapi

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// applyFault carries out an injected fault, for the APIs and the edge alike. It
// reports whether the request goes on to be served.
func (a *API) applyFault(ex *exchange, r *http.Request, act fault.Action) bool {
	ex.faultID = act.FaultID // a pass too: it is a firing (hits, coverage), journaled as one
	if act.Pass {
		return true // a then sequence's {"pass": true}: the request goes on untouched
	}
	if act.Break != "" {
		a.installBreak(ex, r, act) // under the shaper: it breaks the shaped answer
	}
	if sh := act.Shape; sh != nil {
		ex.ResponseWriter = &shaper{ResponseWriter: ex.ResponseWriter, headers: sh.Headers, body: sh.Body}
	}
	if act.Error == string(apperr.RateLimited) {
		// hostemu's own 429: the limit's headers say it is used up (Remaining 0, a
		// Reset no earlier than Retry-After), as the rate_limit fault answers
		act.Status, act.RateLimit = 0, true
	}
	if act.DelayEmulated {
		ex.w.Sleep(r.Context(), act.Delay, a.release)
	} else {
		a.wait(r.Context(), act.Delay)
	}
	switch {
	case act.Status != 0:
		if act.Error != "" && (act.Status == http.StatusTooManyRequests || act.Status == http.StatusServiceUnavailable) {
			// as hostemu sends these codes itself (and RFC 9110 lets a 503 say it): a
			// retrying client has a Retry-After to honour
			ex.Header().Set("Retry-After", itoa(int64(max(act.RetryAfter, 1))))
		}
		code, msg := injected(act)
		a.writeError(ex, ex, r, act.Status, code, msg, nil)
		return false
	case act.RateLimit:
		if ex.class.Kind == KindEdge {
			// the edge has no limits of its own: a 429 with Retry-After, no limit headers
			ex.Header().Set("Retry-After", itoa(int64(max(act.RetryAfter, 1))))
			a.writeError(ex, ex, r, http.StatusTooManyRequests, string(apperr.RateLimited), "injected fault "+act.FaultID+": rate limited", nil)
			return false
		}
		d := ex.w.Exhausted(ex.limitKey, ex.perIP, time.Duration(act.RetryAfter)*time.Second)
		setRateHeaders(ex.Header(), d)
		a.tooMany(ex, r, d)
		return false
	case act.Timeout:
		a.wait(r.Context(), fault.MaxTimeoutSeconds*time.Second)
		ex.errCode = "timeout"
		drop(ex)
		return false
	case act.Drop:
		ex.errCode = "dropped"
		drop(ex)
		return false
	}
	return true
}

// wait holds a faulted request for d, until its client gives up, or until the server
// shuts down (Release).
func (a *API) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-a.release:
	}
}

// injected is the code and message an injected status answers with: the fault's, else
// the catalogue's code for the status and a message naming the fault.
func injected(act fault.Action) (code, msg string) {
	code, msg = act.Code, act.Message
	if code == "" {
		code = apperr.ForStatus(act.Status)
	}
	if msg == "" {
		msg = "injected fault " + act.FaultID
	}
	return code, msg
}

// drop closes the connection without a response. HTTP/2 cannot hand its connection
// over: there the stream is reset, which is what a client of a multiplexed connection
// sees of a dropped request; the connection and its other streams live on.
func drop(ex *exchange) {
	conn, _, err := http.NewResponseController(ex.ResponseWriter).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	ex.closeLater(conn, true)
}

// closeCut closes a connection a fault broke: at once, with a reset when reset.
func closeCut(conn net.Conn, reset bool) {
	if reset {
		resetConn(conn)
		return
	}
	conn.Close()
}

// resetConn closes a hijacked connection at once: with a TCP reset where it can (no
// lingering FIN handshake), as a dropped request looks to its client.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok { // *net.TCPConn, or wrapped
		tc.SetLinger(0)
	}
	conn.Close()
}

// shaper adds a fault's headers to the answer and replaces its body, whoever writes it
// (the handler, or an injected error): the status stays the one written.
type shaper struct {
	http.ResponseWriter
	headers map[string]string
	body    *fault.Payload
	wrote   bool
}

func (s *shaper) WriteHeader(code int) {
	if s.wrote || code < 200 {
		s.ResponseWriter.WriteHeader(code)
		return
	}
	s.wrote = true
	h := s.ResponseWriter.Header()
	if s.body != nil {
		h.Del("Content-Encoding")
		h.Del("ETag")
		h.Set("Content-Length", itoa(int64(len(s.body.Text))))
		if s.body.JSON {
			h.Set("Content-Type", "application/json; charset=utf-8")
		} else {
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	for k, v := range s.headers {
		h.Set(k, v)
	}
	s.ResponseWriter.WriteHeader(code)
	if s.body != nil {
		s.ResponseWriter.Write([]byte(s.body.Text))
	}
}

func (s *shaper) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	if s.body != nil {
		return len(b), nil // the real body gives way to the fault's
	}
	return s.ResponseWriter.Write(b)
}

// Flush sends the shaped head first, then what is buffered.
func (s *shaper) Flush() {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *shaper) Unwrap() http.ResponseWriter { return s.ResponseWriter }
