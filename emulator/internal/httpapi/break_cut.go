package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// cutBreak sends the answer's status line and headers, with the real Content-Length,
// then only the first keep bytes of its body, and closes the connection: "empty" keeps
// none, "truncate" after_bytes (default half). A client reading the body meets
// io.ErrUnexpectedEOF (Node: a TypeError, UND_ERR_SOCKET). Over HTTP/2, which cannot
// hand its connection over, the stream is reset instead.
type cutBreak struct {
	held
	ex   *exchange
	keep int // bytes of the body sent; -1: half
}

func newEmptyBreak(_ *API, ex *exchange, _ *http.Request, _ fault.Action) breaker {
	return &cutBreak{held: held{ResponseWriter: ex.ResponseWriter}, ex: ex}
}

func newTruncateBreak(_ *API, ex *exchange, _ *http.Request, act fault.Action) breaker {
	keep := act.AfterBytes
	if keep == 0 {
		keep = -1
	}
	return &cutBreak{held: held{ResponseWriter: ex.ResponseWriter}, ex: ex, keep: keep}
}

func (b *cutBreak) end() {
	body := b.body.Bytes()
	keep := b.keep
	if keep < 0 {
		keep = len(body) / 2
	}
	keep = min(keep, len(body))
	if b.status == 0 {
		b.status = http.StatusOK
	}
	conn, buf, err := http.NewResponseController(b.ResponseWriter).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2: reset the stream
	}
	h := b.ResponseWriter.Header()
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Del("Transfer-Encoding")
	h.Set("Connection", "close")
	if h.Get("Date") == "" {
		h["Date"] = dateHeader(b.ex.start)
	}
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", b.status, http.StatusText(b.status))
	h.Write(buf)
	buf.WriteString("\r\n")
	buf.Write(body[:keep])
	buf.Flush()
	b.ex.closeLater(conn, false) // a FIN, not a reset: the client reads what was sent, then EOF
}
