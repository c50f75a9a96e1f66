package httpapi

import (
	"net/http"
	"strconv"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// malformedBreak answers 200 (or the fault's own status) with a body that is not JSON,
// still labelled application/json: the first half of the real body, so a JSON parser
// meets its end too soon.
type malformedBreak struct {
	held
	keepStatus bool // the fault gave a status (or error): it stays
}

func newMalformedBreak(_ *API, ex *exchange, _ *http.Request, act fault.Action) breaker {
	return &malformedBreak{held: held{ResponseWriter: ex.ResponseWriter}, keepStatus: act.Status != 0}
}

func (b *malformedBreak) end() {
	body := b.body.Bytes()
	cut := body[:len(body)/2]
	if len(cut) == 0 {
		cut = []byte("{")
	}
	status := http.StatusOK
	if b.keepStatus && b.status != 0 {
		status = b.status
	}
	h := b.ResponseWriter.Header()
	h.Del("Content-Encoding")
	h.Del("ETag")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(cut)))
	b.ResponseWriter.WriteHeader(status)
	b.ResponseWriter.Write(cut)
}
