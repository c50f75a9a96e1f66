package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// Body limits.
const (
	maxJSONBody   = 1 << 20  // hosting JSON bodies
	maxFileBody   = 32 << 20 // POST /v1/files
	maxCipherBody = 2 << 20  // decryption service bodies
)

// readBody reads a request body up to limit bytes: 413 payload_too_large beyond it.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.Body == nil {
		return nil, nil
	}
	r := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	// Start from the declared size (at most 1 MiB: a client may declare more than it
	// sends) rather than ReadAll's doublings; grow only as bytes arrive.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(c.Request.ContentLength, 0), 1<<20)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	b := buf.Bytes()
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apperr.New(apperr.PayloadTooLarge, fmt.Sprintf("the request body is over the limit of %d bytes", limit))
	}
	if err != nil {
		return nil, apperr.New(apperr.InvalidRequest, "the request body could not be read")
	}
	return b, nil
}

// isJSON reports whether a Content-Type names JSON.
func isJSON(contentType string) bool {
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
	b, err := readBody(c, limit)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if ct := c.Request.Header.Get("Content-Type"); !isJSON(ct) {
		if ct == "" {
			ct = "none"
		}
		return nil, apperr.New(apperr.UnsupportedMediaType, "send the body with Content-Type: application/json (got "+ct+")")
	}
	return b, nil
}

// unmarshalStrict decodes exactly one JSON value into dst, mapping errors to the catalogue.
func unmarshalStrict(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apperr.New(apperr.InvalidJSON, "the request body has data after the JSON value")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.New(apperr.InvalidJSON, fmt.Sprintf("the request body is not valid JSON: %v (at byte %d)", syn, syn.Offset))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return apperr.New(apperr.InvalidRequest, "the request body must be a JSON object")
		}
		return apperr.New(apperr.InvalidRequest, fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.New(apperr.InvalidJSON, "the request body is not valid JSON: unexpected end of input")
	}
	// the JSON was well formed: a field's own decoder refused its value (a fault's delay)
	return apperr.New(apperr.InvalidRequest, "field "+err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	}
	return "of another type"
}
