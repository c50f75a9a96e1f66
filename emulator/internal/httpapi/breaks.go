package httpapi

import (
	"bytes"
	"net/http"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// A fault's break is carried out by one small type per way of breaking (Toxiproxy's
// toxics): each wraps the response writer of the request the fault fired for, sees the
// answer the handler (or the injected error) writes, and breaks it its way. breaks is
// their registry, keyed by fault.Breaks (TestBreakRegistry holds the two together).
var breaks = map[string]func(a *API, ex *exchange, r *http.Request, act fault.Action) breaker{
	fault.BreakReset:     newResetBreak,
	fault.BreakEmpty:     newEmptyBreak,
	fault.BreakTruncate:  newTruncateBreak,
	fault.BreakMalformed: newMalformedBreak,
	fault.BreakSlow:      newSlowBreak,
	fault.BreakWrongType: newWrongTypeBreak,
}

// breaker is one way of breaking an answer.
type breaker interface {
	http.ResponseWriter
	// end runs once the answer is written: a break that holds the answer back sends
	// what it leaves of it.
	end()
}

// installBreak wraps ex's writer with the break act names.
func (a *API) installBreak(ex *exchange, r *http.Request, act fault.Action) {
	if mk, ok := breaks[act.Break]; ok {
		b := mk(a, ex, r, act)
		_, ex.headHeld = b.(interface{ holdsHead() })
		ex.ResponseWriter = b
	}
}

// endBreak ends the request's break, if it has one (its writer, under a shaper maybe).
// It returns http.ErrAbortHandler when the break could not be carried out but by
// cutting the answer (HTTP/2 cannot hand its connection over): finish then drops it.
func endBreak(ex *exchange) (abort any) {
	w := ex.ResponseWriter
	if s, ok := w.(*shaper); ok {
		w = s.ResponseWriter
	}
	b, ok := w.(breaker)
	if !ok {
		return nil
	}
	defer func() { abort = recover() }()
	b.end()
	return nil
}

// held is the answer as written, kept back: the status, and the body (up to what the
// fault's breaks need; API answers are small).
type held struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (h *held) WriteHeader(code int) {
	if h.status == 0 && code >= 200 {
		h.status = code
	}
}

func (h *held) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	if h.body.Len() < maxHeldBody {
		h.body.Write(b[:min(len(b), maxHeldBody-h.body.Len())])
	}
	return len(b), nil
}

func (h *held) Flush() {}

// holdsHead says the head goes out at the break's end, not when the handler writes
// it (the journal takes it then: headSent).
func (h *held) holdsHead() {}

// Unwrap lets http.ResponseController reach the connection.
func (h *held) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// maxHeldBody bounds the answer a break holds back (the API's answers are far smaller;
// a longer one is cut there).
const maxHeldBody = 4 << 20
