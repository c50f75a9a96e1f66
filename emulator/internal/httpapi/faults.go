package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// applyFault carries out an injected fault. It reports whether the request goes on to
// its real handler.
func (a *API) applyFault(c *gin.Context, info *reqInfo, act fault.Action) bool {
	if act.Delay > 0 {
		t := time.NewTimer(act.Delay)
		select {
		case <-t.C:
		case <-c.Request.Context().Done():
		case <-a.release:
		}
		t.Stop()
	}
	switch {
	case act.Status != 0:
		code := act.Code
		if code == "" {
			code = codeForStatus(act.Status)
		}
		msg := act.Message
		if msg == "" {
			msg = "injected fault " + act.FaultID
		}
		a.writeError(c, act.Status, code, msg, nil)
		return false
	case act.RateLimit:
		d := a.world(c).Exhausted(info.limitKey, info.perIP, time.Duration(act.RetryAfter)*time.Second)
		setRateHeaders(c, d)
		a.tooMany(c, d)
		return false
	case act.Timeout:
		ctx, cancel := context.WithTimeout(c.Request.Context(), fault.MaxTimeoutSeconds*time.Second)
		select {
		case <-ctx.Done():
		case <-a.release:
		}
		cancel()
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
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok { // *net.TCPConn, or wrapped
		tc.SetLinger(0)
	}
	conn.Close()
}
