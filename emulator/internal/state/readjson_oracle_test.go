package state

// The state reader as it was before it read deployments itself, through
// encoding/json's Decoder, made strict as ReadSnapshot now is (an unknown key refused):
// FuzzReadSnapshot holds ReadSnapshot to the same results.

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

func oracleReadSnapshot(r io.Reader, o ReadOptions) (Snapshot, error) {
	max := o.Max
	if max <= 0 {
		max = 1<<63 - 2
	}
	src := &capReader{r: r, left: max}
	dec := json.NewDecoder(&squeezer{r: src})
	dec.DisallowUnknownFields()
	snap, err := oracleDecode(&o, dec)
	if err != nil {
		if src.err != nil && src.err != io.EOF {
			return Snapshot{}, src.err
		}
		return Snapshot{}, err
	}
	return snap, nil
}

func oracleDecode(o *ReadOptions, dec *json.Decoder) (snap Snapshot, err error) {
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
			snap.Tokens, err = oracleArray[Token](o, dec, "tokens")
		case strings.EqualFold(key, "policy"):
			err = oracleField(o, dec, "policy", &snap.Policy)
		case strings.EqualFold(key, "cipher"):
			err = oracleField(o, dec, "cipher", &snap.Cipher)
		case strings.EqualFold(key, "projects"):
			snap.Projects, err = oracleArray[Project](o, dec, "projects")
		case strings.EqualFold(key, "deployments"):
			snap.Deployments, err = oracleArray[Deployment](o, dec, "deployments")
		case strings.EqualFold(key, "domains"):
			snap.Domains, err = oracleArray[Domain](o, dec, "domains")
		case strings.EqualFold(key, "files"):
			snap.Files, err = oracleArray[string](o, dec, "files")
		case strings.EqualFold(key, "detaching"):
			snap.Detaching, err = oracleArray[Detachment](o, dec, "detaching")
		case strings.EqualFold(key, "uploads"):
			snap.Uploads, err = oracleArray[Upload](o, dec, "uploads")
		default:
			err = apperr.Errorf(apperr.InvalidRequest, "unknown key %q", key)
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
func oracleArray[T any](o *ReadOptions, dec *json.Decoder, field string) ([]T, error) {
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
			return nil, oracleFieldError(o, field, err)
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

func oracleField(o *ReadOptions, dec *json.Decoder, field string, dst any) error {
	if err := dec.Decode(dst); err != nil {
		return oracleFieldError(o, field, err)
	}
	return nil
}

// fieldError maps a decoding error inside field to the catalogue, naming the field.
func oracleFieldError(o *ReadOptions, field string, err error) error {
	if strings.HasPrefix(err.Error(), "json: unknown field ") {
		return apperr.New(apperr.InvalidRequest, err.Error())
	}
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
