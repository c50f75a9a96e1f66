package state

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// ErrTooLarge is ReadSnapshot's error for a document over ReadOptions.Max.
var ErrTooLarge = errors.New("state document over the limit")

// ErrRefused is ReadSnapshot's error when ReadOptions.Charge refused an element.
var ErrRefused = errors.New("state document refused by its budget")

// ReadOptions say how ReadSnapshot reads.
type ReadOptions struct {
	// Max bounds the bytes read (ErrTooLarge beyond); 0 means no bound.
	Max int64
	// Charge, when set, is asked for each array element's decoded size (WeightOf)
	// before it is kept; ReadSnapshot fails with ErrRefused when it says no.
	Charge func(int64) bool
	// Extra, when set, is offered every top-level key a Snapshot does not have, with
	// the decoder before its value: it decodes the value and says so, or leaves it
	// (false), and it is skipped. The --state file's log_seq is read this way.
	Extra func(key string, dec *json.Decoder) (bool, error)
	// JSONError, when set, words a decoding error (a *json.SyntaxError, a
	// *json.UnmarshalTypeError naming the field, an unexpected end) for the caller.
	JSONError func(error) error
}

func (o *ReadOptions) jsonError(err error) error {
	if o.JSONError != nil {
		return o.JSONError(err)
	}
	return err
}

// ReadSnapshot decodes a state document (as GET /_emulator/state and --state write
// it) from r as a stream: one element of an array at a time, so that memory holds the
// decoded state and one element's text, never the whole document. Runs of whitespace
// outside strings are squeezed before the decoder sees them (it would otherwise keep
// them all). It refuses anything but one JSON object, and skips unknown keys (see
// ReadOptions.Extra). A read error is returned as is; ErrTooLarge and ErrRefused as
// themselves.
func ReadSnapshot(r io.Reader, o ReadOptions) (Snapshot, error) {
	max := o.Max
	if max <= 0 {
		max = 1<<63 - 2
	}
	src := &capReader{r: r, left: max}
	snap, err := o.decode(json.NewDecoder(&squeezer{r: src}))
	if err != nil {
		if src.err != nil && src.err != io.EOF {
			return Snapshot{}, src.err
		}
		return Snapshot{}, err
	}
	return snap, nil
}

func (o *ReadOptions) decode(dec *json.Decoder) (snap Snapshot, err error) {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object; the body is empty")
	}
	if err != nil {
		return snap, o.jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return snap, o.jsonError(err)
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "tokens"):
			snap.Tokens, err = readArray[Token](o, dec, "tokens")
		case strings.EqualFold(key, "policy"):
			err = o.decodeField(dec, "policy", &snap.Policy)
		case strings.EqualFold(key, "cipher"):
			err = o.decodeField(dec, "cipher", &snap.Cipher)
		case strings.EqualFold(key, "projects"):
			snap.Projects, err = readArray[Project](o, dec, "projects")
		case strings.EqualFold(key, "deployments"):
			snap.Deployments, err = readArray[Deployment](o, dec, "deployments")
		case strings.EqualFold(key, "domains"):
			snap.Domains, err = readArray[Domain](o, dec, "domains")
		case strings.EqualFold(key, "files"):
			snap.Files, err = readArray[string](o, dec, "files")
		case strings.EqualFold(key, "detaching"):
			snap.Detaching, err = readArray[Detachment](o, dec, "detaching")
		case strings.EqualFold(key, "uploads"):
			snap.Uploads, err = readArray[Upload](o, dec, "uploads")
		default:
			handled := false
			if o.Extra != nil {
				handled, err = o.Extra(key, dec)
			}
			if !handled && err == nil {
				err = o.skipValue(dec)
			}
		}
		if err != nil {
			return snap, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return snap, o.jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return snap, apperr.New(apperr.InvalidJSON, "the request body has data after the JSON value")
	}
	return snap, nil
}

// readArray decodes a JSON array (or null) one element at a time.
func readArray[T any](o *ReadOptions, dec *json.Decoder, field string) ([]T, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, o.jsonError(err)
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
			return nil, o.fieldError(field, err)
		}
		if o.Charge != nil && !o.Charge(WeightOf(&v)+2*int64(unsafe.Sizeof(v))) { // 2×: the array's slack as it grows
			return nil, ErrRefused
		}
		out = append(out, v)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return nil, o.jsonError(err)
	}
	return out, nil
}

func (o *ReadOptions) decodeField(dec *json.Decoder, field string, dst any) error {
	if err := dec.Decode(dst); err != nil {
		return o.fieldError(field, err)
	}
	return nil
}

// fieldError maps a decoding error inside field to the catalogue, naming the field.
func (o *ReadOptions) fieldError(field string, err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			typ.Field = field
		} else {
			typ.Field = field + "." + typ.Field
		}
	}
	return o.jsonError(err)
}

// skipValue reads past one value of an unknown field, token by token.
func (o *ReadOptions) skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return o.jsonError(err)
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

// capReader reads at most left bytes, then fails with ErrTooLarge; it keeps the
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
		n, err = 0, ErrTooLarge
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
