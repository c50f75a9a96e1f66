package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// The pipeline: every request the front door classified goes through serve, the one
// place that journals it, applies faults (and drops), recovers panics into the
// documented answer and writes errors, whatever its kind. The kinds differ only in the
// steps they take (policies), not in where those steps live.

// exchange is one request's answer in progress and what the pipeline learnt about it:
// the response writer every handler writes to (gin's and the edge's alike), so that a
// handler finds it with exchangeOf and the pipeline sees the status it answered.
type exchange struct {
	http.ResponseWriter
	class Class
	w     *world.World // the request's world: its namespace's, or the default one
	start time.Time

	status    int  // the status written, 0 until then
	journaled bool // the request goes into its world's journal once answered
	prepared  bool // the body is ready for the handler (prepareBody)

	hasHeader bool        // an Authorization header was sent
	token     string      // its bearer token, "" without one (bearerToken)
	tokenRead bool        // token is read
	authed    bool        // its bearer credential is valid
	scope     state.Scope // hosting tokens only
	limitKey  string      // the rate-limit key the request was counted under
	perIP     bool
	errCode   string
	faultID   string   // the injected fault that fired
	route     string   // the route template that answered ("/v1/deployments/:id"), if one did
	body      *capture // the journal's copy of the body: capt, once prepareBody has set it
	capt      capture  // kept across the pool's reuses, with its buffer
	meter     meteredBody
	// whole is the handler's own buffer of the whole body, never changed once read (an
	// upload's): the journal keeps it rather than a copy of capt's bytes (see record)
	whole []byte
	// redact keeps a decryption-service body out of the journal: only an /v1/encrypt
	// payload's length (payloadChars, -1 until the handler has read it) is recorded.
	redact       bool
	payloadChars int

	// the journal's copy of the answer (answer.go): its first journal.MaxBody+1 bytes in
	// a buffer kept across the pool's reuses, the writer that keeps them, how many bytes
	// were written in all, and the writer above the gzip layer
	head   bool // a HEAD: no body goes out
	answer []byte
	// shared is an answer's body the handler writes from bytes never modified once made
	// (a rendered deployment of the cache); answerShared says it is the whole answer
	// so far, written in one piece, and that answer holds none of it: the journal keeps
	// shared as it is, without a copy (keepAnswer)
	shared       []byte
	answerShared bool
	answerFrom   answerFrom
	answerBytes  int
	above        aboveWriter

	// sent is the answer's head as it went out, for the journal (headSent): net/http
	// sends the header map as it is when the head goes, and a header set after never
	// reaches the client. headHeld says a fault's break holds the head back and sends
	// it at its end: the journal then takes the map as it is once the break is over.
	sent     journal.AnswerHead
	headHeld bool

	// cut is a connection a fault broke (reset, drop, a cut answer), hijacked and held
	// open until the request is journaled and counted (finish): a client that looks
	// right after it sees the break finds the request. cutReset closes it with a reset.
	cut      net.Conn
	cutReset bool

	// sentURL is the request's URL as sent when the router reads another (plusEscaped),
	// for the messages that name the path as sent (sentPath); nil otherwise
	sentURL *url.URL
}

// closeLater has finish close conn, hijacked by a fault's break, once the request is
// journaled and counted (with a TCP reset when reset).
func (ex *exchange) closeLater(conn net.Conn, reset bool) {
	ex.cut, ex.cutReset = conn, reset
}

// wallRead is the request's reading of the machine's time for clock.NowAt: its start,
// or the zero time (read afresh) once a fault fired on it, which may have held it up
// (a delay): what fell due meanwhile must have happened in what it reads.
func (ex *exchange) wallRead() time.Time {
	if ex.faultID != "" {
		return time.Time{}
	}
	return ex.start
}

// reuse readies a pooled exchange for a request, keeping its answer's and its request
// body's buffers.
func (ex *exchange) reuse(next exchange) {
	answer, body := ex.answer[:0], ex.capt.buf[:0]
	*ex = next
	ex.answer, ex.capt.buf = answer, body
}

func (ex *exchange) WriteHeader(code int) {
	if ex.status == 0 && code >= 200 {
		ex.status = code
	}
	ex.ResponseWriter.WriteHeader(code)
	if code >= 200 { // an informational head (100, 103) is not the answer's
		ex.headSent()
	}
}

func (ex *exchange) Write(b []byte) (int, error) {
	if ex.status == 0 {
		ex.status = http.StatusOK
	}
	ex.keepAnswer(b, answerExchange)
	n, err := ex.ResponseWriter.Write(b)
	ex.headSent()
	return n, err
}

// Flush sends what is buffered (server-sent events; gin's writer asks for it).
func (ex *exchange) Flush() {
	if ex.status == 0 {
		ex.status = http.StatusOK
	}
	http.NewResponseController(ex.ResponseWriter).Flush()
	ex.headSent()
}

// headSent keeps the answer's head for the journal as it went out, the first time it
// did (a WriteHeader, Write or Flush through the exchange sends it): taken after the
// writers below (a fault's shaper sets its headers as the head goes), and never for a
// break that holds the head back (headHeld) or a request not journaled. Its walk is
// the one the journal would make of the map when the request is recorded, done here
// instead: no copy of the map.
func (ex *exchange) headSent() {
	if ex.journaled && !ex.headHeld && !ex.sent.Taken() {
		ex.sent.Take(ex.ResponseWriter.Header())
	}
}

// Unwrap lets http.ResponseController reach the connection (drops, deadlines).
func (ex *exchange) Unwrap() http.ResponseWriter { return ex.ResponseWriter }

// exchangeOf is the exchange a gin handler answers into (under gin's writer and the
// gzip writer).
func exchangeOf(c *gin.Context) *exchange {
	var w http.ResponseWriter = c.Writer
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

// exchanges are reused: one is made for every request, on the hot path, and none
// outlives its request (finish gives it back, reset to zero but for its buffers).
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// serve classifies r, arrived on listener l, and answers it as its kind asks; a panic
// anywhere, the classification included, is recovered by finish.
func (a *API) serve(w http.ResponseWriter, r *http.Request, l Listener) {
	// zero but for its buffers (new, or reset by finish): setting a few fields costs less
	// than copying a whole exchange over it again
	ex := exchanges.Get().(*exchange)
	ex.ResponseWriter, ex.w, ex.start, ex.payloadChars, ex.head = w, a.w, time.Now(), -1, r.Method == http.MethodHead
	defer a.finish(ex, r)
	ex.class = a.Classify(r, l)
	cls := &ex.class
	switch cls.Kind {
	case KindTunnel:
		ex.journaled, ex.w = true, cls.World
		a.serveConnect(ex, r)
	case KindEdge:
		ex.journaled, ex.w = true, cls.World
		a.serveEdge(ex, r)
	case KindHosting, KindCipher, KindNotFound:
		a.servePublic(ex, r)
	case KindHealth, KindControl, KindPage:
		answered, err := a.guardControl(ex, r)
		if err != nil {
			a.fail(ex, r, err)
			return
		}
		if answered {
			return
		}
		if cls.Kind == KindControl {
			if err := a.controlAuth(r); err != nil {
				a.fail(ex, r, err)
				return
			}
		}
		a.route(ex, r)
	case KindDocs:
		a.route(ex, r)
	}
}

// servePublic serves the emulated services: identify the caller, count it against its
// rate limit (before auth, so an exhausted IP gets 429, not 401), apply injected
// faults, then route. CORS preflights are answered first, not counted nor journaled.
func (a *API) servePublic(ex *exchange, r *http.Request) {
	h := ex.Header()
	if preflightOf(r) && ex.class.Kind != KindNotFound {
		preflight(ex, r, a.allowOrigin(r.Header.Get("Origin")))
		return
	}
	a.corsHeaders(h, r)
	ex.journaled = true
	r = a.prepareBody(ex, r)
	a.identify(ex, r)
	// counted at the start's reading of the wall (clock.NowAt), not a reading of its own
	d, now, wall := ex.w.Count(ex.limitKey, ex.perIP, ex.start)
	if !wall { // else net/http writes the same Date itself, cheaper than a header of ours
		h["Date"] = dateHeader(now)
	}
	setRateHeaders(h, d)
	if !d.Allowed {
		a.tooMany(ex, r, d)
		return
	}
	fr := ex.faultRequest(r, ex.class.Kind.service(), "")
	fr.Scope = string(ex.scope)
	if ex.body != nil && ex.w.FaultsWantBody(fr) {
		fr.Body = ex.body.peek() // the journal's copy: the handler reads the same bytes
	}
	if act, ok := ex.w.MatchFault(fr); ok && !a.applyFault(ex, r, act) {
		return
	}
	if ex.class.Kind == KindNotFound {
		a.fail(ex, r, apperr.New(apperr.NotFound, "no route "+r.Method+" "+r.URL.EscapedPath()))
		return
	}
	a.route(ex, r)
}

// serveEdge serves a deployment host or custom domain: faults that match the edge, then
// the edge's answer.
func (a *API) serveEdge(ex *exchange, r *http.Request) {
	cls := &ex.class
	if act, ok := ex.w.MatchFault(ex.faultRequest(r, serviceEdge, cls.Host)); ok && !a.applyFault(ex, r, act) {
		return
	}
	if err := a.edgeOf(ex.w).Serve(ex, r, cls.Edge); err != nil {
		a.fail(ex, r, err)
	}
}

// faultRequest is what faults match r on (its body is read only when a fault asks).
func (ex *exchange) faultRequest(r *http.Request, service, host string) fault.Request {
	return fault.Request{Method: r.Method, Path: ex.class.Path, Service: service, Host: host,
		RawQuery: r.URL.RawQuery, Header: r.Header, Token: ex.bearerToken(r)}
}

// bearerToken is r's bearer token ("" without one), read once for identify, faults and
// the journal.
func (ex *exchange) bearerToken(r *http.Request) string {
	if !ex.tokenRead {
		ex.token, _ = bearer(headerOf(r.Header, "Authorization"))
		ex.tokenRead = true
	}
	return ex.token
}

// route hands an API request to the router, which finds its handler, with its body
// prepared (prepareBody) and metered against the budget of bytes in flight.
func (a *API) route(ex *exchange, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		r = a.prepareBody(ex, r)
		m := a.meterBody(ex, r)
		defer func() { a.bodies.release(m.held) }()
	}
	if strings.IndexByte(r.URL.RawPath, '+') >= 0 {
		ex.sentURL = r.URL
		r = plusEscaped(r)
	}
	a.apiHTTP.ServeHTTP(ex, r)
}

// plusEscaped is r with each '+' of its raw path sent as %2B, for the router: gin
// unescapes a parameter of the raw path (UseRawPath) with url.QueryUnescape, which reads
// '+' as a space, where in a path '+' is itself: DELETE /_emulator/tokens/t+x%2Fy names
// the token "t+x/y", and /v1/deployments/dpl+x%41 the id "dpl+xA" as u.Path has it.
// Only a path sent with an escape and a '+' is copied.
func plusEscaped(r *http.Request) *http.Request {
	u := *r.URL
	u.RawPath = strings.ReplaceAll(u.RawPath, "+", "%2B")
	r = r.WithContext(r.Context())
	r.URL = &u
	return r
}

// sentPath is the path of c's request as it was sent, escapes and all, for a message
// that names it: the router's copy of a path with an escape reads each '+' as %2B
// (plusEscaped), which the client never sent.
func sentPath(c *gin.Context) string {
	if ex := exchangeOf(c); ex != nil && ex.sentURL != nil {
		return ex.sentURL.EscapedPath()
	}
	return c.Request.URL.EscapedPath()
}

// finish ends every request: a panic becomes the documented 500 (or, once the answer
// has started, a dropped connection), and a journaled request is recorded and logged.
func (a *API) finish(ex *exchange, r *http.Request) {
	rec := recover()
	if rec == nil {
		rec = endBreak(ex) // a fault's break sends what it left of the answer
	}
	if conn := ex.cut; conn != nil {
		// a broken connection closes once the request is journaled and counted below
		defer closeCut(conn, ex.cutReset)
	}
	switch {
	case rec == nil:
	case rec == http.ErrAbortHandler:
		if ex.errCode == "" {
			ex.errCode = "dropped"
		}
	default:
		a.log.Error("panic serving request", "kind", ex.class.Kind.String(), "method", r.Method, "path", r.URL.Path, "panic", rec)
		if ex.status == 0 {
			a.fail(ex, r, apperr.New(apperr.InternalError, "internal error; see the emulator's log"))
		} else {
			ex.errCode, rec = "dropped", http.ErrAbortHandler // half an answer: cut it
		}
	}
	if ex.journaled {
		a.record(ex, r)
	}
	if k := ex.class.Kind; k == KindHosting || k == KindCipher {
		status := ex.status
		if ex.errCode == "dropped" || ex.errCode == "timeout" {
			status = 0
		}
		ex.w.Coverage().Answer(r.Method, ex.route, ex.class.Path, status, ex.errCode)
	}
	ex.reuse(exchange{})
	exchanges.Put(ex)
	if rec != nil && rec == http.ErrAbortHandler {
		panic(rec) // net/http's way to drop the connection
	}
}

// fail answers err in the form of the request's kind: the edge's HTML page (or the
// envelope when JSON is preferred) for the edge, the JSON envelope for everything
// else. Its status comes from the catalogue; an unknown host asked for through the
// proxy is 403, since the request never leaves the machine.
func (a *API) fail(ex *exchange, r *http.Request, err error) { a.failTo(ex, ex, r, err) }

// failTo is fail writing to w: a gin handler's writer over the exchange.
func (a *API) failTo(ex *exchange, w http.ResponseWriter, r *http.Request, err error) {
	e, known := toAppError(err)
	if !known {
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	status := apperr.Status(e.Code)
	if e.Code == apperr.UnknownHost && ex.class.Proxy {
		status = http.StatusForbidden
	}
	a.writeErrorObject(ex, w, r, status, errorObject{Code: string(e.Code), Message: e.Message, Missing: e.Missing, NearMisses: e.NearMisses})
}
