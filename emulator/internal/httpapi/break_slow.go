package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// slowBreak sends the real answer at bytes_per_second: the body in slices of a tenth of
// a second's bytes, each after the wait of wall time (the network's) its bytes take, then
// flushed, so that the last byte arrives size/bytes_per_second after the first was due,
// as over a link of that bandwidth. It stops when the client gives up or the server
// shuts down.
type slowBreak struct {
	http.ResponseWriter
	a   *API
	r   *http.Request
	bps int
}

func newSlowBreak(a *API, ex *exchange, r *http.Request, act fault.Action) breaker {
	return &slowBreak{ResponseWriter: ex.ResponseWriter, a: a, r: r, bps: act.BytesPerSecond}
}

var errGaveUp = errors.New("the client gave up on a slow answer")

func (b *slowBreak) Write(p []byte) (int, error) {
	slice := max(b.bps/10, 1)
	rc := http.NewResponseController(b.ResponseWriter)
	n := 0
	for n < len(p) {
		m := min(slice, len(p)-n)
		b.a.wait(b.r.Context(), time.Duration(m)*time.Second/time.Duration(b.bps))
		if b.r.Context().Err() != nil {
			return n, errGaveUp
		}
		if _, err := b.ResponseWriter.Write(p[n : n+m]); err != nil {
			return n, err
		}
		n += m
		rc.Flush()
	}
	return n, nil
}

func (b *slowBreak) end() {}

func (b *slowBreak) Unwrap() http.ResponseWriter { return b.ResponseWriter }
