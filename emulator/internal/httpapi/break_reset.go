package httpapi

import (
	"net/http"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// resetBreak lets the handler run (what the request does is done) and resets the
// connection before any byte of the answer: the client sees ECONNRESET, or an EOF.
type resetBreak struct {
	http.ResponseWriter
	ex   *exchange
	done bool
}

func newResetBreak(_ *API, ex *exchange, _ *http.Request, _ fault.Action) breaker {
	return &resetBreak{ResponseWriter: ex.ResponseWriter, ex: ex}
}

func (b *resetBreak) WriteHeader(int) { b.reset() }

func (b *resetBreak) Write(p []byte) (int, error) {
	b.reset()
	return len(p), nil
}

func (b *resetBreak) Flush() { b.reset() }

func (b *resetBreak) end() { b.reset() }

func (b *resetBreak) reset() {
	if b.done {
		return
	}
	b.done = true
	b.ex.errCode = "dropped" // no byte of the answer left
	conn, _, err := http.NewResponseController(b.ResponseWriter).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // HTTP/2: the stream is reset instead (finish drops it)
	}
	b.ex.closeLater(conn, true) // once the request is journaled and counted
}

func (b *resetBreak) Unwrap() http.ResponseWriter { return b.ResponseWriter }
