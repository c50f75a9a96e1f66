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
	if act.DelayEmulated {
		ex.w.Sleep(r.Context(), act.Delay, a.release)
	} else {
		a.wait(r.Context(), act.Delay)
	}
	switch {
	case act.Status != 0:
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
		code = codeForStatus(act.Status)
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
	resetConn(conn)
}

// resetConn closes a hijacked connection at once: with a TCP reset where it can (no
// lingering FIN handshake), as a dropped request looks to its client.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok { // *net.TCPConn, or wrapped
		tc.SetLinger(0)
	}
	conn.Close()
}
