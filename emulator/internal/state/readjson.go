package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
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
	// the value's JSON text (valid or not: Extra checks what it takes): it decodes the
	// value and says so, or leaves it (false), and the key is refused as unknown. The
	// --state file's log_seq is read this way.
	Extra func(key string, value []byte) (bool, error)
	// JSONError, when set, words a decoding error (a *json.SyntaxError, a
	// *json.UnmarshalTypeError naming the field, an unexpected end) for the caller.
	JSONError func(error) error
}

func (o *ReadOptions) jsonError(err error) error {
	if _, coded := apperr.As(err); coded || errors.Is(err, ErrRefused) {
		return err // worded already (an unknown key), or the caller's budget's
	}
	if o.JSONError != nil {
		return o.JSONError(err)
	}
	return err
}

// snapshotKeys are a state document's keys, for "did you mean".
var snapshotKeys = []string{"tokens", "policy", "cipher", "projects", "deployments", "domains", "files", "detaching", "uploads"}

// ReadSnapshot decodes a state document (as GET /_emulator/state and --state write
// it) from r as a stream: one element of an array at a time, so that memory holds the
// decoded state and one element's text, never the whole document (runs of whitespace
// outside strings count as one byte). It refuses anything but one JSON object, and a key
// the state does not have, at any depth, with 400 invalid_request naming it and the
// closest known one (see ReadOptions.Extra). A read error is returned as is;
// ErrTooLarge and ErrRefused as themselves.
//
// It reads as encoding/json's Decoder read it before (FuzzReadSnapshot holds the two
// together): its own scanner finds each element's text, which encoding/json decodes —
// deployments, most of a big state, excepted: decodeDeployment reads those.
func ReadSnapshot(r io.Reader, o ReadOptions) (Snapshot, error) {
	max := o.Max
	if max <= 0 {
		max = 1<<63 - 2
	}
	src := &capReader{r: r, left: max}
	snap, err := o.decode(&scanner{r: src, buf: make([]byte, 64<<10), charge: o.Charge})
	if err != nil {
		if src.err != nil && src.err != io.EOF {
			return Snapshot{}, src.err
		}
		return Snapshot{}, err
	}
	return snap, nil
}

func (o *ReadOptions) decode(s *scanner) (snap Snapshot, err error) {
	c, ok := s.next()
	if !ok {
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object; the body is empty")
	}
	if c != '{' {
		if c != '[' { // a string, number or literal: as encoding/json's Token read it
			s.back()
			if _, err := s.token(); err != nil {
				return snap, o.jsonError(err)
			}
		}
		return snap, apperr.New(apperr.InvalidRequest, "the state must be a JSON object")
	}
	var given []string // the keys read, in lower case: a list of a dozen at most
	for first := true; ; first = false {
		more, err := s.more('}', first)
		if err != nil {
			return snap, o.jsonError(err)
		}
		if !more {
			break
		}
		key, err := s.memberKey()
		if err != nil {
			return snap, o.jsonError(err)
		}
		if lower := strings.ToLower(key); slices.Contains(given, lower) {
			// the second would replace the first: {"tokens":[…], …, "tokens":[]} is a typo
			// or a merge gone wrong, never a world to load
			return snap, apperr.Errorf(apperr.InvalidRequest, "key %q in the state is given twice: give it once", key)
		} else if len(given) < 64 {
			given = append(given, lower)
		}
		switch {
		case strings.EqualFold(key, "tokens"):
			snap.Tokens, err = readArray[Token](o, s, "tokens")
		case strings.EqualFold(key, "policy"):
			err = o.decodeField(s, "policy", &snap.Policy)
		case strings.EqualFold(key, "cipher"):
			err = o.decodeField(s, "cipher", &snap.Cipher)
		case strings.EqualFold(key, "projects"):
			snap.Projects, err = readArray[Project](o, s, "projects")
		case strings.EqualFold(key, "deployments"):
			var ar arena
			snap.Deployments, err = readArrayIn[Deployment](o, s, "deployments", &ar)
			snap.filesRead = &ar.verdict
		case strings.EqualFold(key, "domains"):
			snap.Domains, err = readArray[Domain](o, s, "domains")
		case strings.EqualFold(key, "files"):
			snap.Files, err = readArray[string](o, s, "files")
		case strings.EqualFold(key, "detaching"):
			snap.Detaching, err = readArray[Detachment](o, s, "detaching")
		case strings.EqualFold(key, "uploads"):
			snap.Uploads, err = readArray[Upload](o, s, "uploads")
		default:
			handled := false
			if o.Extra != nil {
				var text []byte
				if text, err = s.value(); err != nil {
					return snap, o.jsonError(err)
				}
				if handled, err = o.Extra(key, text); err != nil {
					return snap, o.jsonError(err)
				}
			}
			if !handled {
				return snap, apperr.Errorf(apperr.InvalidRequest, "unknown key %q in the state%s", key, yamlcheck.Suggest(key, snapshotKeys))
			}
		}
		if err != nil {
			return snap, err
		}
	}
	if _, ok := s.next(); ok || s.readErr() != nil {
		return snap, apperr.New(apperr.InvalidJSON, "the request body has data after the JSON value")
	}
	return snap, nil
}

// readArray decodes a JSON array (or null) one element at a time.
func readArray[T any](o *ReadOptions, s *scanner, field string) ([]T, error) {
	var ar arena
	return readArrayIn[T](o, s, field, &ar)
}

// readArrayIn is readArray cutting its strings from ar, which keeps the verdict on
// the files of deployments read (filesread.go).
func readArrayIn[T any](o *ReadOptions, s *scanner, field string, ar *arena) ([]T, error) {
	c, ok := s.next()
	if !ok {
		return nil, o.jsonError(io.ErrUnexpectedEOF)
	}
	if c != '[' {
		if c == '{' {
			return nil, apperr.Errorf(apperr.InvalidRequest, "field %q must be an array", field)
		}
		s.back()
		tok, err := s.token()
		switch {
		case err != nil:
			return nil, o.jsonError(err)
		case tok == nil:
			return nil, nil
		}
		return nil, apperr.Errorf(apperr.InvalidRequest, "field %q must be an array", field)
	}
	var out gathered[T]
	for first := true; ; first = false {
		more, err := s.more(']', first)
		if err != nil {
			return nil, o.jsonError(err)
		}
		if !more {
			break
		}
		v := out.next()
		if !inPlace(s, v, ar) {
			start := s.offset()
			text, err := s.value()
			if err != nil {
				return nil, o.jsonError(err)
			}
			if err := decodeElement(text, v, ar, field); err != nil {
				return nil, o.fieldError(field, at(err, start))
			}
		}
		if d, ok := any(v).(*Deployment); ok {
			ar.settleFiles(d)
		}
		if o.Charge != nil && !o.Charge(WeightOf(v)+2*int64(unsafe.Sizeof(*v))) { // 2×: the chunks, then the array
			return nil, ErrRefused
		}
	}
	return out.all(), nil
}

// gathered gathers an array's elements in chunks, then copies them once into an array
// of their number: growing one array by appends would copy a big state's deployments
// several times over (by a quarter at a time, past 256 elements).
type gathered[T any] struct {
	full []([]T)
	cur  []T
	n    int
}

// next is a zero element added at the end, decoded in place.
func (c *gathered[T]) next() *T {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, min(max(2*cap(c.cur), 16), 4096))
	}
	c.cur = c.cur[:len(c.cur)+1]
	c.n++
	return &c.cur[len(c.cur)-1]
}

// all is the elements in one array ([] when none).
func (c *gathered[T]) all() []T {
	if len(c.full) == 0 {
		if c.cur == nil {
			return []T{}
		}
		return c.cur
	}
	out := make([]T, 0, c.n)
	for _, f := range c.full {
		out = append(out, f...)
	}
	return append(out, c.cur...)
}

// inPlaceRoom is how many bytes of the document inPlace wants in the scanner's buffer
// before it reads an element where it lies: elements are read in place unless they
// are longer than that and cut by the buffer's end.
const inPlaceRoom = 16 << 10

// inPlace reads the next element of a deployments or files array where it lies in the
// scanner's buffer, into v, when it can (nothing consumed when it cannot: the element
// is then scanned and decoded as any other). It reads what decodeDeployment and a
// string read of the element's text, and only that; the text of a whole element held
// in the buffer is read once, rather than scanned and then read.
func inPlace[T any](s *scanner, v *T, ar *arena) bool {
	switch x := any(v).(type) {
	case *Deployment:
		s.room(inPlaceRoom)
		p := dparser{b: s.buf[s.pos:s.end], a: ar}
		if p.deployment(x) {
			s.pos += p.i
			return true
		}
		*x = Deployment{}
	case *string: // the files' digests: as many as the deployments' files
		s.room(inPlaceRoom)
		p := dparser{b: s.buf[s.pos:s.end], a: ar}
		if str, ok := p.str(); ok {
			*x = str
			s.pos += p.i
			return true
		}
	}
	return false
}

// decodeElement decodes one element of field's array as encoding/json does, refusing
// keys its type does not have (strictjson); a deployment by decodeDeployment when it
// can (it gives up on any key it does not know).
func decodeElement[T any](text []byte, v *T, ar *arena, field string) error {
	switch x := any(v).(type) { // v is decoded into a copy: it does not escape through strictjson
	case *Deployment:
		if decodeDeployment(text, x, ar) {
			return nil
		}
		*x = Deployment{}
	case *string: // the files' digests: as many as the deployments' files
		p := dparser{b: text, a: ar}
		if str, ok := p.str(); ok && p.i == len(text) {
			*x = str
			return nil
		}
	}
	dst := new(T)
	err := strictjson.Decode(text, dst, field)
	if err == nil {
		// a key given twice in an element, or one field in two cases, is refused as in
		// the control API's bodies; a deployment comes here only when decodeDeployment
		// gave up (it gives up on both), so the replay's hot path does not scan its
		// deployments again
		err = strictjson.GivenOnce(text, dst, field)
	}
	*v = *dst
	return err
}

func (o *ReadOptions) decodeField(s *scanner, field string, dst any) error {
	start := s.offset()
	text, err := s.value()
	if err != nil {
		return o.jsonError(err)
	}
	if err := strictjson.Decode(text, dst, field); err != nil {
		return o.fieldError(field, at(err, start))
	}
	if err := strictjson.GivenOnce(text, dst, field); err != nil {
		return o.fieldError(field, at(err, start))
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

// MaxDepth bounds how deeply a state document's values nest, the document's own object
// included: a state nests five levels (a deployment's logs), and a value nested deeper
// is refused as the scanner reaches it, before any of it is held or decoded.
const MaxDepth = 32

// scanner reads JSON text from r: the bytes between values, and each value's text
// whole, runs of whitespace outside strings squeezed to one space.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int
	end  int
	base int64 // the offset in the stream of buf[0]
	err  error // the read error that ended the stream (io.EOF at its end)
	text []byte
	// charge, when set, is asked for the bytes text grows by (ReadOptions.Charge): one
	// element's text is held whole, so it is held within the caller's budget;
	// charged is what it was asked for so far.
	charge  func(int64) bool
	charged int64
}

// held charges the growth of s.text's buffer: false when the budget refuses it.
func (s *scanner) held() bool {
	c := int64(cap(s.text))
	if s.charge == nil || c <= s.charged {
		return true
	}
	if !s.charge(c - s.charged) {
		return false
	}
	s.charged = c
	return true
}

// tooDeep is the error of a value nested deeper than MaxDepth, at the scanner's offset.
func (s *scanner) tooDeep() error {
	return apperr.Errorf(apperr.InvalidRequest, "the state nests arrays and objects deeper than %d levels (at byte %d): over its depth bound", MaxDepth, s.offset())
}

// fill reads more into buf, from its start; false at the end of the stream.
func (s *scanner) fill() bool {
	if s.err != nil {
		return false
	}
	s.base += int64(s.end)
	s.pos, s.end = 0, 0
	for range 100 {
		n, err := s.r.Read(s.buf)
		s.end = n
		if err != nil {
			s.err = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// readErr is the read error that ended the stream, nil at its end.
func (s *scanner) readErr() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

// next returns the next byte that is not whitespace, consumed.
func (s *scanner) next() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			s.pos++
			if !isSpace(c) {
				return c, true
			}
		}
		if !s.fill() {
			return 0, false
		}
	}
}

// more reads what comes before an object's next member or an array's next element: false
// at the object's or array's end (end consumed), true when one follows (first: it would
// be the first).
func (s *scanner) more(end byte, first bool) (bool, error) {
	c, ok := s.next()
	if !ok {
		return false, io.ErrUnexpectedEOF
	}
	switch {
	case c == end:
		return false, nil
	case first:
		s.back()
	case c != ',' && end == '}':
		return false, s.syntaxError(c, `{"":{}`)
	case c != ',':
		return false, s.syntaxError(c, `[{}`)
	}
	return true, nil
}

// memberKey reads a member's key and its colon.
func (s *scanner) memberKey() (string, error) {
	c, ok := s.next()
	if !ok {
		return "", io.ErrUnexpectedEOF
	}
	if c != '"' {
		return "", s.syntaxError(c, `{"":{},`)
	}
	s.back()
	key, err := s.key()
	if err != nil {
		return "", err
	}
	if c, ok = s.next(); !ok {
		return "", io.ErrUnexpectedEOF
	} else if c != ':' {
		return "", s.syntaxError(c, `{""`)
	}
	return key, nil
}

// room makes the buffer hold at least n bytes from pos when the stream has them (n at
// most half the buffer): more is read after what is left, which is first moved to the
// buffer's start when there is no room for n bytes after it. The offsets stay the
// stream's.
func (s *scanner) room(n int) {
	if s.end-s.pos >= n || s.err != nil {
		return
	}
	if len(s.buf)-s.pos < n {
		left := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.end = 0, left
	}
	for range 100 {
		k, err := s.r.Read(s.buf[s.end:])
		s.end += k
		if err != nil {
			s.err = err
			return
		}
		if s.end-s.pos >= n || s.end == len(s.buf) {
			return
		}
	}
}

// back gives back the byte next returned (still in buf).
func (s *scanner) back() { s.pos-- }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// startsValue reports whether a JSON value may start with c.
func startsValue(c byte) bool {
	switch c {
	case '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return '0' <= c && c <= '9'
}

// value reads the next value's text (valid or not: its decoder checks it) and returns
// it; the bytes are the scanner's, good until its next read.
func (s *scanner) value() ([]byte, error) {
	c, ok := s.next()
	if !ok {
		return nil, s.endErr()
	}
	if !startsValue(c) {
		return nil, s.syntaxError(c, "")
	}
	if c != '{' && c != '[' && c != '"' {
		s.text = append(s.text[:0], c)
		return s.literal()
	}
	// The value's text is copied into s.text only once it has to be: when the buffer
	// must be filled again, or a run of whitespace squeezed. Else (most elements of a
	// document without whitespace) it is returned where it lies in buf.
	s.text = s.text[:0]
	copied := false
	depth, inString, escaped, space := 0, c == '"', false, false
	if !inString {
		depth = 1
	}
	start := s.pos - 1
	done := func(i int) []byte {
		s.pos = i + 1
		if !copied {
			return s.buf[start : i+1]
		}
		s.text = append(s.text, s.buf[start:i+1]...)
		return s.text
	}
	for {
		i := s.pos
		for ; i < s.end; i++ {
			c := s.buf[i]
			if inString {
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if depth == 0 {
						return done(i), nil
					}
				default:
					// most of a string has no escapes: on to its closing quote,
					// or its next backslash
					q := bytes.IndexByte(s.buf[i:s.end], '"')
					if q < 0 {
						q = s.end - i
					}
					if b := bytes.IndexByte(s.buf[i:i+q], '\\'); b >= 0 {
						q = b
					}
					i += q - 1 // the loop's i++ lands on it
				}
				continue
			}
			if isSpace(c) {
				if !space {
					space, copied = true, true
					s.text = append(s.text, s.buf[start:i]...)
					s.text = append(s.text, ' ')
					if !s.held() {
						return nil, ErrRefused
					}
				}
				start = i + 1
				continue
			}
			space = false
			switch c {
			case '"':
				inString = true
			case '{', '[':
				// the document's object is one level above the value's own
				if depth++; depth >= MaxDepth {
					s.pos = i
					return nil, s.tooDeep()
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return done(i), nil
				}
			}
		}
		s.text = append(s.text, s.buf[start:i]...)
		copied = true
		s.pos = i
		if !s.held() {
			return nil, ErrRefused
		}
		if !s.fill() {
			return nil, s.endErr()
		}
		start = 0
	}
}

// literal reads the rest of a number or literal (its first byte in s.text), as
// encoding/json's scanner does: it ends where the value can go no further, without
// taking the byte that ends it; a byte that breaks it is a syntax error.
func (s *scanner) literal() ([]byte, error) {
	if rest := literalRest(s.text[0]); rest != "" {
		for i := range len(rest) {
			c, ok := s.peek()
			if !ok {
				return nil, s.endErr()
			}
			if c != rest[i] {
				return nil, s.syntaxError(c, string(s.text))
			}
			s.text = append(s.text, c)
			s.pos++
		}
		return s.text, nil
	}
	// a number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
	const (
		afterMinus = iota
		afterZero
		inInt
		afterDot
		inFrac
		afterE
		afterESign
		inExp
	)
	state := inInt
	switch s.text[0] {
	case '-':
		state = afterMinus
	case '0':
		state = afterZero
	}
	for {
		c, ok := s.peek()
		if !ok {
			switch state {
			case afterZero, inInt, inFrac, inExp:
				if err := s.readErr(); err != nil {
					return nil, err
				}
				return s.text, nil
			}
			return nil, s.endErr()
		}
		digit := '0' <= c && c <= '9'
		next := -1
		switch state {
		case afterMinus:
			switch {
			case c == '0':
				next = afterZero
			case digit:
				next = inInt
			default:
				return nil, s.syntaxError(c, string(s.text))
			}
		case afterZero, inInt:
			switch {
			case digit && state == inInt:
				next = inInt
			case c == '.':
				next = afterDot
			case c == 'e' || c == 'E':
				next = afterE
			}
		case afterDot, inFrac:
			switch {
			case digit:
				next = inFrac
			case state == afterDot:
				return nil, s.syntaxError(c, string(s.text))
			case c == 'e' || c == 'E':
				next = afterE
			}
		case afterE:
			switch {
			case c == '+' || c == '-':
				next = afterESign
			case digit:
				next = inExp
			default:
				return nil, s.syntaxError(c, string(s.text))
			}
		case afterESign, inExp:
			switch {
			case digit:
				next = inExp
			case state == afterESign:
				return nil, s.syntaxError(c, string(s.text))
			}
		}
		if next < 0 {
			return s.text, nil // the number ended before c
		}
		state = next
		s.text = append(s.text, c)
		s.pos++
	}
}

// literalRest is what follows the first byte of true, false or null.
func literalRest(c byte) string {
	switch c {
	case 't':
		return "rue"
	case 'f':
		return "alse"
	case 'n':
		return "ull"
	}
	return ""
}

// peek returns the next byte, not consumed.
func (s *scanner) peek() (byte, bool) {
	if s.pos == s.end && !s.fill() {
		return 0, false
	}
	return s.buf[s.pos], true
}

// token reads a string, number or literal as encoding/json's Decoder.Token reads it.
func (s *scanner) token() (json.Token, error) {
	start := s.offset()
	text, err := s.value()
	if err != nil {
		return nil, err
	}
	tok, err := json.NewDecoder(bytes.NewReader(text)).Token()
	return tok, at(err, start)
}

// endErr is the error of a stream that ended inside a value.
func (s *scanner) endErr() error {
	if err := s.readErr(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// key reads an object key (a string) and unquotes it.
func (s *scanner) key() (string, error) {
	start := s.offset()
	text, err := s.value()
	if err != nil {
		return "", err
	}
	for _, c := range text[1 : len(text)-1] {
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			var k string
			if err := json.Unmarshal(text, &k); err != nil {
				return "", at(err, start)
			}
			return k, nil
		}
	}
	return string(text[1 : len(text)-1]), nil
}

// syntaxError is encoding/json's error for c coming where it does, at the scanner's
// offset: what json.Unmarshal says of c after before ("" where a value starts,
// `{"":{},` where a key does, `{""` after a key, `{"":{}` after a member, `[{}` after an element).
func (s *scanner) syntaxError(c byte, before string) error {
	err := json.Unmarshal(append([]byte(before), c), new(any))
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		syn.Offset = s.offset()
		return syn
	}
	return apperr.Errorf(apperr.InvalidJSON, "the request body is not valid JSON (at byte %d)", s.offset())
}

// at moves a syntax error's offset in an element's text to the stream's.
func at(err error, start int64) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		syn.Offset += start
	}
	return err
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
