package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strconv"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// The journal keeps each answer's body as the handler wrote it: the first
// journal.MaxBody bytes, into a buffer the pooled exchange keeps from one request to
// the next, so that keeping it costs a copy of at most that many bytes and no
// allocation (Add then copies what it keeps into the entry's one allocation). Nothing
// is kept for a request that is not journaled, for a HEAD (no body goes out), or for
// the decryption service, whose answers are counted, never kept: a decrypt answer is
// the plaintext (its request, an envelope, is kept; an encrypt request is redacted).
//
// An API answer may be gzipped on its way out (compress.Responses, between the
// handlers and the exchange): the body is then kept above the gzip writer, by the
// writer keepAbove puts in front of the router, never as the compressed bytes the
// exchange sees. An answer written straight to the exchange (the pipeline's own
// errors, the edge) is kept by the exchange.

// answerFrom says which writer keeps an exchange's answer: the first to see its bytes.
type answerFrom uint8

const (
	answerNone     answerFrom = iota // nothing written yet
	answerExchange                   // written straight to the exchange
	answerAbove                      // written through the writer above the gzip layer
)

// keepAnswer keeps what of b the journal will hold, written by from.
func (ex *exchange) keepAnswer(b []byte, from answerFrom) {
	if !ex.journaled || ex.head || len(b) == 0 {
		return
	}
	switch ex.answerFrom {
	case answerNone:
		ex.answerFrom = from
	case from:
	default:
		return // the same bytes, seen again below the gzip layer (or compressed)
	}
	ex.answerBytes += len(b)
	if ex.secretAnswer() {
		return // counted, never kept
	}
	if ex.answerBytes == len(b) && len(b) <= journal.MaxBody && len(b) == len(ex.shared) && &b[0] == &ex.shared[0] {
		ex.answerShared = true // the whole answer so far, and bytes never modified: no copy
		return
	}
	if ex.answerShared { // more after the shared bytes: keep a copy of them first
		ex.answerShared = false
		ex.keepCopy(ex.shared)
	}
	ex.keepCopy(b)
}

// keepCopy appends to the journal's copy of the answer what room is left for of b.
func (ex *exchange) keepCopy(b []byte) {
	if room := journal.MaxBody + 1 - len(ex.answer); room > 0 {
		if ex.answer == nil {
			ex.answer = make([]byte, 0, journal.MaxBody+1)
		}
		ex.answer = append(ex.answer, b[:min(len(b), room)]...)
	}
}

// answerBody is the body the journal keeps of ex's answer: the bytes kept, or, for the
// decryption service, only how many there were.
func (ex *exchange) answerBody() []byte {
	if ex.secretAnswer() && ex.answerBytes > 0 {
		return []byte("[redacted: " + strconv.Itoa(ex.answerBytes) + " bytes]")
	}
	if ex.answerShared {
		return ex.shared
	}
	if ex.answer == nil {
		return []byte{} // an answer without a body: "" rather than absent
	}
	return ex.answer
}

// secretAnswer reports whether ex's answer may hold a secret: the decryption service's
// (and any request the front door took for one).
func (ex *exchange) secretAnswer() bool { return ex.class.Kind == KindCipher || ex.class.Secret }

// keepAbove serves h with the journal's copy of the answer taken above whatever writer
// w is (the gzip layer's, for a client that accepts gzip): h writes through the
// exchange's above writer, which keeps the bytes and passes them on.
func keepAbove(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := exchangeBelow(w)
		if ex == nil || w == http.ResponseWriter(ex) || !ex.journaled {
			h.ServeHTTP(w, r) // nothing in between, or nothing to keep
			return
		}
		ex.above = aboveWriter{ResponseWriter: w, ex: ex}
		h.ServeHTTP(&ex.above, r)
	})
}

// exchangeBelow is the exchange under w and the writers wrapping it.
func exchangeBelow(w http.ResponseWriter) *exchange {
	for {
		switch x := w.(type) {
		case *exchange:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// aboveWriter is the writer the API's handlers write to when their answer may be
// gzipped below: it keeps the journal's copy, then passes the bytes on.
type aboveWriter struct {
	http.ResponseWriter
	ex *exchange
}

func (w *aboveWriter) Write(b []byte) (int, error) {
	w.ex.keepAnswer(b, answerAbove)
	return w.ResponseWriter.Write(b)
}

// Flush passes on (server-sent events; gin's writer asks for it).
func (w *aboveWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// Hijack passes on (gin's writer asks for it).
func (w *aboveWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets exchangeOf and http.ResponseController reach the writers below.
func (w *aboveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
