package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// DefaultMaxStateBytes bounds PUT /_emulator/state when Limits.StateBytes is 0.
const DefaultMaxStateBytes = 256 << 20

// errStateTooLarge is readSnapshot's error for a body over its limit.
var errStateTooLarge = errors.New("state body over the limit")

// decodeSnapshot reads PUT /_emulator/state's body: a JSON Content-Type, at most max
// bytes, one JSON object and nothing after it.
//
// What it decodes is charged, element by element, to the budget of bytes in flight
// (state.WeightOf: the decoded size, not the text's, which the decoder holds one
// element of at a time), until the request is answered: a state import costs its
// decoded size, and imports together cannot pass the budget.
func decodeSnapshot(c *gin.Context, max int64) (state.Snapshot, error) {
	if err := notJSON(c, "state"); err != nil {
		return state.Snapshot{}, err
	}
	if err := unsupportedEncoding(c.Request); err != nil {
		return state.Snapshot{}, err
	}
	if c.Request.ContentLength > max {
		return state.Snapshot{}, stateTooLarge(max)
	}
	body, charge := io.Reader(c.Request.Body), func(int64) bool { return true }
	if m, ok := c.Request.Body.(*meteredBody); ok {
		body, charge = m.r, m.reserve // charge the decoded state, not the text
	}
	snap, err := readSnapshot(body, max, charge)
	_, coded := apperr.As(err)
	switch {
	case err == nil, coded:
		return snap, err
	case errors.Is(err, errStateTooLarge):
		return snap, stateTooLarge(max)
	case errors.Is(err, errBodyBudget):
		return snap, busy(c)
	}
	return snap, apperr.New(apperr.InvalidRequest, "the request body could not be read")
}

func stateTooLarge(max int64) error {
	return apperr.Errorf(apperr.PayloadTooLarge, "the state is over the limit of %d bytes (--max-state-bytes)", max)
}

// readSnapshot decodes a state from r as a stream: one element of an array at a time, so
// that memory holds the decoded state and one element's text, never the whole body.
// Runs of whitespace outside strings are squeezed before the decoder sees them (it
// would otherwise keep them all). It reads at most max bytes (errStateTooLarge beyond),
// refuses anything but one JSON object, and ignores unknown fields. A read error is
// returned as is; a JSON one is an *apperr.Error.
//
// charge is asked for each element's decoded size (state.WeightOf) and its place in the
// array; readSnapshot fails with errBodyBudget when it refuses.
func readSnapshot(r io.Reader, max int64, charge func(int64) bool) (state.Snapshot, error) {
	src := &capReader{r: r, left: max}
	snap, err := decodeState(json.NewDecoder(&squeezer{r: src}), charge)
	if err != nil {
		if src.err != nil && src.err != io.EOF {
			return state.Snapshot{}, src.err
		}
		return state.Snapshot{}, err
	}
	return snap, nil
}

func decodeState(dec *json.Decoder, charge func(int64) bool) (snap state.Snapshot, err error) {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object; the body is empty")
	}
	if err != nil {
		return snap, jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return snap, jsonError(err)
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "tokens"):
			snap.Tokens, err = readArray[state.Token](dec, charge, "tokens")
		case strings.EqualFold(key, "policy"):
			err = decodeField(dec, "policy", &snap.Policy)
		case strings.EqualFold(key, "cipher"):
			err = decodeField(dec, "cipher", &snap.Cipher)
		case strings.EqualFold(key, "projects"):
			snap.Projects, err = readArray[state.Project](dec, charge, "projects")
		case strings.EqualFold(key, "deployments"):
			snap.Deployments, err = readArray[state.Deployment](dec, charge, "deployments")
		case strings.EqualFold(key, "domains"):
			snap.Domains, err = readArray[state.Domain](dec, charge, "domains")
		case strings.EqualFold(key, "files"):
			snap.Files, err = readArray[string](dec, charge, "files")
		case strings.EqualFold(key, "detaching"):
			snap.Detaching, err = readArray[state.Detachment](dec, charge, "detaching")
		case strings.EqualFold(key, "uploads"):
			snap.Uploads, err = readArray[state.Upload](dec, charge, "uploads")
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return snap, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return snap, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return snap, apperr.New(apperr.InvalidJSON, "the request body has data after the JSON value")
	}
	return snap, nil
}

// readArray decodes a JSON array (or null) one element at a time.
func readArray[T any](dec *json.Decoder, charge func(int64) bool, field string) ([]T, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, apperr.Errorf(apperr.InvalidRequest, "field %q must be an array", field)
	}
	out := []T{}
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, fieldError(field, err)
		}
		if !charge(state.WeightOf(&v) + 2*int64(unsafe.Sizeof(v))) { // 2×: the array's slack as it grows
			return nil, errBodyBudget
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return nil, jsonError(err)
	}
	return out, nil
}

func decodeField(dec *json.Decoder, field string, dst any) error {
	if err := dec.Decode(dst); err != nil {
		return fieldError(field, err)
	}
	return nil
}

// fieldError maps a decoding error inside field to the catalogue, naming the field.
func fieldError(field string, err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			typ.Field = field
		} else {
			typ.Field = field + "." + typ.Field
		}
	}
	return jsonError(err)
}

// skipValue reads past one value of an unknown field, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return jsonError(err)
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// capReader reads at most left bytes, then fails with errStateTooLarge; it keeps the
// first error it returns, so that a read error is told apart from a JSON one.
type capReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		n, err = 0, errStateTooLarge
	}
	c.err = err
	return n, err
}

// squeezer turns every run of JSON whitespace outside strings into one space: the same
// JSON, but a body of nothing but whitespace no longer fills the decoder's buffer.
type squeezer struct {
	r        io.Reader
	inString bool
	escaped  bool
	space    bool // the last byte passed on outside a string was whitespace
}

func (s *squeezer) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		out := 0
		for _, b := range p[:n] {
			switch {
			case s.inString:
				s.inString = s.escaped || b != '"'
				s.escaped = !s.escaped && b == '\\'
			case b == ' ' || b == '\t' || b == '\n' || b == '\r':
				if s.space {
					continue
				}
				s.space, b = true, ' '
			default:
				s.space = false
				s.inString = b == '"'
			}
			p[out] = b
			out++
		}
		if out > 0 || err != nil || n == 0 {
			return out, err
		}
	}
}

// streamState is the world's state, exported now and written as it is encoded.
func (a *API) streamState(w *world.World) streamed {
	snap := w.Export()
	return func(w io.Writer) error { return state.WriteSnapshot(w, &snap, "") }
}
