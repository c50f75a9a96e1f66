package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
)

// Body limits.
const (
	maxJSONBody   = 1 << 20  // hosting JSON bodies
	maxFileBody   = 32 << 20 // POST /v1/files
	maxCipherBody = 2 << 20  // decryption service bodies
)

// readBody reads a request body up to limit bytes: 413 payload_too_large beyond it, and
// 503 service_unavailable when holding it would go over the budget of body bytes in
// flight. The buffer grows as bytes arrive, not to a declared Content-Length (a client
// may declare more than it sends), and every byte of its capacity is charged to the
// budget until the request is answered.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	body := c.Request.Body
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	if err := unsupportedEncoding(c.Request); err != nil {
		return nil, err // refused before reading a byte
	}
	if c.Request.ContentLength > limit {
		return nil, bodyTooLarge(limit) // refused before reading a byte
	}
	m, metered := body.(*meteredBody)
	if metered {
		body = m.r // readBody charges its buffer's capacity, not each read
	}
	r := http.MaxBytesReader(c.Writer, body, limit)
	var buf []byte
	var first *[firstStep]byte // the first step's pooled buffer, while buf is it
	defer func() {
		if first != nil {
			firstSteps.Put(first)
		}
	}()
	for {
		if len(buf) == cap(buf) {
			grown := nextCap(cap(buf), c.Request.ContentLength, limit)
			if metered && !m.reserve(int64(grown-cap(buf))) {
				return nil, busy(c)
			}
			if grown == firstStep && cap(buf) == 0 {
				// a body of 512 bytes or more, or of no declared length: its first step
				// in a pooled buffer, copied once into the next step's or the body's own
				first = firstSteps.Get().(*[firstStep]byte)
				buf = first[:0]
			} else {
				buf = append(make([]byte, 0, grown), buf...)
				if first != nil {
					firstSteps.Put(first)
					first = nil
				}
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == nil {
			continue // the checks below allocate: not on every read
		}
		if err == io.EOF {
			if first != nil { // the body is no longer than the first step: its own copy
				return append(make([]byte, 0, len(buf)), buf...), nil
			}
			return buf, nil
		}
		// errors.As takes its address: declared here, its allocation is made only for
		// a body that fails, not on every body's end
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return nil, bodyTooLarge(limit)
		case isCoded(err):
			return nil, err // a corrupt gzip body
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, apperr.New(apperr.InvalidRequest, "the request body was not received in time: it came slower than the minimum rate (--min-body-rate)")
		case err != nil:
			return nil, apperr.New(apperr.InvalidRequest, "the request body could not be read")
		}
	}
}

// firstStep is the first capacity of a body buffer (nextCap) whose length is not
// declared smaller.
const firstStep = 512

// firstSteps are the buffers of readBody's first step, given back once the body has
// moved on to a buffer of its own: that step's allocation was made and dropped by
// every body of 512 bytes or more (an upload of 1 KiB: 512 bytes, then 1,025).
var firstSteps = sync.Pool{New: func() any { return new([firstStep]byte) }}

// nextCap is the next capacity of a body buffer: doubling from 512 bytes, up to the
// declared length (plus one byte to read its end) or else the limit (plus one byte to
// see it passed). Once the first 512 bytes have come, a declared length up to 64 KiB is
// believed (the client is sending: the rest of a small body in one buffer), and once
// 1 MiB has come, any declared length is, and allocated at once: doubling would leave as
// much garbage again. A client that declares much and sends nothing holds 512 bytes. A
// step that would end on the declared length exactly takes the byte more, so that its
// end is not one more copy.
func nextCap(c int, declared, limit int64) int {
	end := limit + 1
	n := int64(max(2*c, firstStep))
	if declared >= 0 {
		end = declared + 1
		if c >= 1<<20 {
			return int(end)
		}
		if c > 0 {
			n = max(n, 64<<10)
		}
	}
	n = min(n, end)
	if declared >= 0 && n == declared {
		n = end
	}
	return int(n)
}

func isCoded(err error) bool {
	_, ok := apperr.As(err)
	return ok
}

func bodyTooLarge(limit int64) error {
	return apperr.Errorf(apperr.PayloadTooLarge, "the request body is over the limit of %d bytes", limit)
}

// isJSON reports whether a Content-Type names JSON.
func isJSON(contentType string) bool {
	// the forms clients send, answered without parsing: mime.ParseMediaType allocates
	// a map of parameters for every call (TestIsJSONFastForms holds the two to one answer)
	if contentType == "application/json" || contentType == "application/json; charset=utf-8" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// decodeJSON reads a JSON object body into dst. An empty body decodes as {} and needs
// no Content-Type; a non-empty one needs a JSON Content-Type (415), at most limit bytes
// (413), valid JSON (invalid_json) with known fields of the right type (invalid_request,
// naming the field). Unknown fields are ignored.
func decodeJSON(c *gin.Context, dst any, limit int64) error {
	b, err := readJSONBody(c, limit)
	if err != nil || b == nil {
		return err
	}
	return unmarshalStrict(b, dst)
}

// readJSONBody reads a body for decodeJSON: nil when it is empty, else the bytes of a
// body with a JSON Content-Type.
func readJSONBody(c *gin.Context, limit int64) ([]byte, error) {
	if expectsContinue(c.Request) && c.Request.ContentLength != 0 {
		// the client waits to hear whether to send: tell it now, not after the body
		if err := notJSON(c, "body"); err != nil {
			return nil, err
		}
	}
	b, err := readBody(c, limit)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if err := notJSON(c, "body"); err != nil {
		return nil, err
	}
	return b, nil
}

// notJSON is 415 unsupported_media_type for a body whose Content-Type is not JSON; the
// message asks to send what (the body, the state) as JSON.
func notJSON(c *gin.Context, what string) error {
	ct := headerOf(c.Request.Header, "Content-Type")
	if isJSON(ct) {
		return nil
	}
	if ct == "" {
		ct = "none"
	}
	return apperr.New(apperr.UnsupportedMediaType, "send the "+what+" with Content-Type: application/json (got "+ct+")")
}

// unmarshalStrict decodes exactly one JSON value into dst, mapping errors to the catalogue.
func unmarshalStrict(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(dst); err != nil {
		// a value refused is named by its place, which encoding/json's error does not
		// say: a field's own decoder's refusal ("then.delay"), a map's key ("match.query")
		return jsonError(strictjson.Explain(b, dst, "", err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return apperr.New(apperr.InvalidJSON, "the request body has data after the JSON value")
	}
	return nil
}

func jsonError(err error) error {
	if isCoded(err) {
		return err // worded already (strictjson.Explain)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.Errorf(apperr.InvalidJSON, "the request body is not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.As(err, &typ):
		msg, named := strictjson.TypeMessage(typ)
		if !named {
			return apperr.New(apperr.InvalidRequest, "the request body must be a JSON object")
		}
		return apperr.New(apperr.InvalidRequest, msg)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.New(apperr.InvalidJSON, "the request body is not valid JSON: unexpected end of input")
	}
	// the JSON was well formed: a field's own decoder refused its value (a fault's delay)
	return apperr.New(apperr.InvalidRequest, "field "+err.Error())
}
