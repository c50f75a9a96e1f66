package transport

import (
	"io"
	"net/http"
	"time"
)

// BodyDeadline gives every request body a read deadline that moves with the bytes: the
// body must have arrived within grace + bytes/rate of its start. A slow but moving
// upload keeps going; a stalled one is cut (its read fails, the handler answers 400,
// the connection closes).
//
// On an HTTP/1 connection of Conns (its server's ConnContext is connContext), the
// deadline is handed to the connection, whose next read sets it (limitedConn.Read):
// a small body arrives with the request's head and net/http has it in its buffer
// already, so the body is read without a read from the connection, and without the
// runtime timer that setting and clearing a deadline arm and disarm (3 % of a
// create's CPU). Any read from the connection while the body is read is under the
// deadline, as before. Elsewhere (HTTP/2, a server of the caller's) it is set on the
// response at once.
func BodyDeadline(h http.Handler, grace time.Duration, rate int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// the body's reader and the request reading it in one allocation (see Copied)
			x := &timedRequest{body: rateBody{ReadCloser: r.Body, start: time.Now(), grace: grace, rate: rate}}
			timed := false
			if r.ProtoMajor == 1 {
				x.body.conn, _ = r.Context().Value(connKey{}).(*limitedConn)
			}
			if x.body.conn != nil {
				x.body.setDeadline(x.body.deadline())
				timed = true
			} else {
				x.body.rc = *http.NewResponseController(w)
				timed = x.body.rc.SetReadDeadline(x.body.deadline()) == nil // else not a connection we can time
			}
			if timed {
				x.req = *r // a shallow copy, as r.WithContext(r.Context()) makes
				x.req.Body, x.body.req = &x.body, &x.req
				r = &x.req
			}
		}
		h.ServeHTTP(w, r)
	})
}

// timedRequest is a shallow copy of a request whose body is read through a rateBody.
// The server's own request must keep its body: net/http looks at it after the handler
// to tell a body the handler never asked for (Expect: 100-continue, not sent: close the
// connection) from one to discard.
type timedRequest struct {
	req  http.Request
	body rateBody
}

// Copied reports whether r is BodyDeadline's shallow copy of the server's request (its
// body is the deadline's reader): a handler may then set its body and fields in place,
// without a copy of its own, since net/http keeps its own request.
func Copied(r *http.Request) bool {
	b, ok := r.Body.(*rateBody)
	return ok && b.req == r
}

// rateBody moves the connection's read deadline as bytes arrive.
type rateBody struct {
	io.ReadCloser
	// conn is the connection the body arrives on, whose reads set the deadline
	// (limitedConn.setBodyDeadline); nil where it is set through rc at once
	conn     *limitedConn
	rc       http.ResponseController
	due      time.Time     // the deadline handed to conn
	req      *http.Request // the copy that reads it (see Copied)
	start    time.Time
	grace    time.Duration
	rate     int64
	read     int64 // bytes read so far
	extended int64 // read when the deadline was last moved
	// ended: the body was read to its end and the server's body closed (Read)
	ended bool
}

// deadlineStep is how many bytes move the deadline: a syscall-free but not free call,
// made every 16 KiB rather than on every read.
const deadlineStep = 16 << 10

func (b *rateBody) deadline() time.Time {
	return b.start.Add(b.grace + time.Duration(float64(b.read)/float64(b.rate)*float64(time.Second)))
}

// setDeadline sets the body's read deadline t, or clears it (the zero time).
func (b *rateBody) setDeadline(t time.Time) {
	switch {
	case b.conn == nil:
		b.rc.SetReadDeadline(t)
	case t.IsZero():
		b.conn.clearBodyDeadline()
	default:
		b.due = t
		b.conn.setBodyDeadline(&b.due)
	}
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.ended {
		return 0, io.EOF // as the server's body answers a read after its end
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	switch {
	case err == io.EOF:
		// the body is in; the server now reads in the background to notice a client
		// that goes away, which must not hit the body's deadline
		b.setDeadline(time.Time{})
		if b.conn != nil {
			// an HTTP/1 body read to its end, closed at once: closing it then only
			// marks it closed, where net/http, finding it open after the handler,
			// would read it once more to its end to discard the rest (io.CopyN with a
			// new reader and io.Discard's pooled buffer, on every request with a
			// body). Reads after this answer io.EOF here, as the server's body did.
			b.ReadCloser.Close()
			b.ended = true
		}
	case err == nil && b.read-b.extended >= deadlineStep:
		b.extended = b.read
		b.setDeadline(b.deadline())
	}
	return n, err
}
