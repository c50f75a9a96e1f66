package httpapi

import (
	"net/http"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// wrongTypeBreak sends the real answer labelled text/html: a client that checks the
// Content-Type before parsing sees a proxy's page where it expected JSON.
type wrongTypeBreak struct {
	http.ResponseWriter
	wrote bool
}

func newWrongTypeBreak(_ *API, ex *exchange, _ *http.Request, _ fault.Action) breaker {
	return &wrongTypeBreak{ResponseWriter: ex.ResponseWriter}
}

func (b *wrongTypeBreak) WriteHeader(code int) {
	if !b.wrote && code >= 200 {
		b.wrote = true
		b.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *wrongTypeBreak) Write(p []byte) (int, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	return b.ResponseWriter.Write(p)
}

func (b *wrongTypeBreak) end() {}

func (b *wrongTypeBreak) Unwrap() http.ResponseWriter { return b.ResponseWriter }
