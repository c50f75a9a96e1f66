package httpapi

import (
	"cmp"
	"encoding/json"

	"net/http"
	"strconv"
	"sync"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/edge"

	"github.com/gin-gonic/gin"
)

// handlerFunc is what every route handler is: it returns a value to render as JSON, or
// an error to render as the documented envelope. Rendering happens in one place.
type handlerFunc func(c *gin.Context) (any, error)

// created marks a value answered with 201 Created.
type created struct{ v any }

// pooledJSON is a body rendered into a pooled buffer: the hot GETs and creates render
// into one and handle hands it back once written, so a request does not allocate its
// body. status is the answer's (200 when 0).
type pooledJSON struct {
	b      []byte
	status int
}

var jsonBuffers = sync.Pool{New: func() any { return &pooledJSON{b: make([]byte, 0, 2048)} }}

func newPooledJSON() *pooledJSON {
	p := jsonBuffers.Get().(*pooledJSON)
	p.b, p.status = p.b[:0], 0
	return p
}

func (p *pooledJSON) release() {
	if cap(p.b) <= 64<<10 { // a huge list page is not worth keeping
		jsonBuffers.Put(p)
	}
}

// handle adapts a handlerFunc to gin.
func (a *API) handle(fn handlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		ex := exchangeOf(c)
		if ex != nil {
			ex.route = c.FullPath() // for the request's log line
		}
		v, err := fn(c)
		if m := c.Request.Method; m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
			// a write is acknowledged only once it is durable (--state)
			if derr := a.world(c).Durable(c.Request.Context()); derr != nil && err == nil {
				err = derr
			}
		}
		if err != nil {
			if s, ok := v.(*stateStream); ok {
				s.release() // never written
			}
			a.renderError(c, err)
			return
		}
		if s, ok := v.(*stateStream); ok {
			a.writeStreamed(c, s.write)
			return
		}
		if s, ok := v.(streamed); ok {
			a.writeStreamed(c, s)
			return
		}
		if e, ok := v.(*rendered); ok {
			if ex != nil {
				ex.shared = e.body // immutable: the journal keeps it without a copy
			}
			writeJSONTo(c.Writer, http.StatusOK, e.body)
			return
		}
		if p, ok := v.(*pooledJSON); ok {
			writeJSONTo(c.Writer, cmp.Or(p.status, http.StatusOK), p.b)
			p.release()
			return
		}
		status := http.StatusOK
		if cr, ok := v.(created); ok {
			status, v = http.StatusCreated, cr.v
		}
		writeJSON(c, status, v)
	}
}

const jsonContentType = "application/json; charset=utf-8"

// jsonContentTypeValue is shared by every response: header values are replaced, never
// modified in place, so one slice serves all (and spares an allocation per request).
var jsonContentTypeValue = []string{jsonContentType}

func writeJSON(c *gin.Context, status int, v any) {
	var b []byte
	if raw, ok := v.(json.RawMessage); ok {
		b = raw
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal_error","message":"response encoding failed","doc_url":""}}`)
		}
	}
	writeJSONTo(c.Writer, status, b)
}

// writeJSONTo answers status with the JSON b.
func writeJSONTo(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonContentTypeValue
	w.WriteHeader(status)
	w.Write(b)
}

type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	DocURL  string   `json:"doc_url"`
	Missing []string `json:"missing,omitempty"`
	// NearMisses is an await_timeout's: what almost matched its requests condition
	// (`[]` when nothing came close; absent from every other error).
	NearMisses any `json:"near_misses,omitempty"`
}

// renderError answers err in the documented envelope and aborts the chain: the gin
// handlers' way into fail.
func (a *API) renderError(c *gin.Context, err error) {
	c.Abort()
	a.failTo(exchangeOf(c), c.Writer, c.Request, err)
}

// writeError writes an error with any status and code to w (the exchange, or a
// writer over it), in the form of the request's kind (see fail): the catalogue's, or
// what an injected fault names.
func (a *API) writeError(ex *exchange, w http.ResponseWriter, r *http.Request, status int, code, message string, missing []string) {
	a.writeErrorObject(ex, w, r, status, errorObject{Code: code, Message: message, Missing: missing})
}

// writeErrorObject is writeError of a whole error object (its doc_url set here).
func (a *API) writeErrorObject(ex *exchange, w http.ResponseWriter, r *http.Request, status int, o errorObject) {
	code, message := o.Code, o.Message
	ex.errCode = code
	if ex.class.Kind == KindEdge || ex.class.Kind == KindTunnel {
		edge.WriteError(w, r, status, code, message, a.edgeDocsBase(r)+"/docs/errors/"+code)
		return
	}
	if code == string(apperr.ForbiddenHost) {
		// the request's host is exactly the name hostemu refused as its own: a link
		// there is refused again (or, from a malformed Host, is no URL at all)
		o.DocURL = a.edgeDocsBase(r) + "/docs/errors/" + code
	} else {
		o.DocURL = a.baseURL(r) + "/docs/errors/" + code
	}
	b, _ := json.Marshal(errorBody{Error: o})
	writeJSONTo(w, status, b)
}

// baseURL is where links to hostemu point: --public-url, else the request's own
// scheme and host (so links work from a CI job container); through a CONNECT tunnel,
// the HTTPS listener (tunnelBase).
func (a *API) baseURL(r *http.Request) string {
	prefix, host := a.baseParts(r)
	return prefix + host
}

// baseParts is baseURL in two parts, prefix + host, before they are put together (the
// render cache compares them as they are): "http://" or "https://" and the request's
// host, or --public-url and "".
func (a *API) baseParts(r *http.Request) (prefix, host string) {
	if a.cfg.PublicURL != "" {
		return a.cfg.PublicURL, ""
	}
	if tunneled(r) {
		return a.tunnelBase(r), ""
	}
	prefix = "http://"
	if r.TLS != nil {
		prefix = "https://"
	} else if p := headerOf(r.Header, "X-Forwarded-Proto"); (p == "https" || p == "http") && a.trusted(peerAddr(r.RemoteAddr)) {
		prefix = p + "://"
	}
	host = r.Host
	if host == "" {
		host = "localhost"
	}
	return prefix, host
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// headerOf is h.Get(name) for a name already in canonical form (a constant): the
// request path asks for a few headers on every request, and Get puts the name in
// canonical form each time before it looks.
func headerOf(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}
