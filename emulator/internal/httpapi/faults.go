package httpapi

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// applyFault carries out an injected fault. It reports whether the request goes on to
// its real handler.
func (a *API) applyFault(c *gin.Context, info *reqInfo, act fault.Action) bool {
	a.wait(c.Request.Context(), act.Delay)
	switch {
	case act.Status != 0:
		code, msg := injected(act)
		a.writeError(c, act.Status, code, msg, nil)
		return false
	case act.RateLimit:
		d := a.world(c).Exhausted(info.limitKey, info.perIP, time.Duration(act.RetryAfter)*time.Second)
		setRateHeaders(c, d)
		a.tooMany(c, d)
		return false
	case act.Timeout:
		a.wait(c.Request.Context(), fault.MaxTimeoutSeconds*time.Second)
		info.errCode = "timeout"
		drop(c)
		return false
	case act.Drop:
		info.errCode = "dropped"
		drop(c)
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
// over (and gin's Hijack would panic on a writer that is no Hijacker): there the stream
// is reset, which is what a client of a multiplexed connection sees of a dropped
// request; the connection and its other streams live on.
func drop(c *gin.Context) {
	c.Abort()
	if c.Request.ProtoMajor != 1 {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := c.Writer.Hijack()
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
