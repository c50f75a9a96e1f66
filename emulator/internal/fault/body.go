package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of a body match (a fault's match.body entry, the journal's body filter).
const (
	MaxBodyMatch = 512 // bytes of a body match: path=value
	MaxBodyDepth = 32  // steps of a body match's path
)

// BodyMatch selects request bodies by the JSON value at a path: "target=production"
// holds for {"target":"production"}, "meta.branch=main" for {"meta":{"branch":"main"}},
// "files[0].path=/index.html" for a first file of that path, and a path alone
// ("meta.commit") for a body where it exists. A leading "$." is allowed. A string is
// compared with the text after "=", any other value with its JSON (3, true, null).
//
// It is hostemu's one body matcher: a fault's match.body, and the journal's body
// filter of queries and awaits.
type BodyMatch struct {
	steps []bodyStep
	value *string
	raw   string
	kind  valueKind
	// want is the value decoded as JSON (numbers as json.Number), when it is JSON: what
	// a value other than a string is compared with, by jsonEqual.
	want    any
	hasWant bool
}

// valueKind is what a match's value compares with: in the text form (a journal query's
// "path=value") a string's text or any other value's JSON; a fault's match.body, whose
// value is JSON, only a value of its own type (3 is not "3").
type valueKind uint8

const (
	valueText   valueKind = iota // the text form: "3" and 3 alike
	valueString                  // a JSON string: a string of that text
	valueJSON                    // any other JSON value: that JSON, not a string
)

// bodyStep is one step of a body path: a key, or an index when key is "" and index
// >= 0.
type bodyStep struct {
	key   string
	index int
}

// String is the match as written.
func (m *BodyMatch) String() string { return m.raw }

// ParseBodyMatch reads "path=value" or "path"; the error says what is wrong.
func ParseBodyMatch(s string) (*BodyMatch, error) {
	if len(s) > MaxBodyMatch {
		return nil, fmt.Errorf("a body match is at most %d bytes", MaxBodyMatch)
	}
	m := &BodyMatch{raw: s}
	path, value, hasValue := strings.Cut(s, "=")
	if hasValue {
		m.value = &value
		m.want, m.hasWant = decodeJSON(value, true) // "3 x" is no value
	}
	path = strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	if path == "" {
		return nil, errors.New(`a body match needs a path, e.g. "target=production" or "files[0].path=/index.html"`)
	}
	for part := range strings.SplitSeq(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && rest == "" {
			return nil, fmt.Errorf("body match %q: empty key in the path", s)
		}
		if key != "" {
			m.steps = append(m.steps, bodyStep{key: key, index: -1})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 || idx != strconv.Itoa(n) {
				return nil, fmt.Errorf("body match %q: want [n], an index from 0", s)
			}
			m.steps = append(m.steps, bodyStep{index: n})
			if after == "" {
				break
			}
			if after[0] != '[' {
				return nil, fmt.Errorf("body match %q: want . or [ after ]", s)
			}
			rest = after[1:]
		}
	}
	if len(m.steps) > MaxBodyDepth {
		return nil, fmt.Errorf("body match %q: at most %d steps", s, MaxBodyDepth)
	}
	return m, nil
}

// Matches reports whether body is JSON holding the match.
func (m *BodyMatch) Matches(body string) bool { return m.HoldsIn(DecodeBody(body)) }

// HoldsIn is Matches for a body decoded by DecodeBody (ok false: not JSON): near misses
// and the journal decode each body once, whatever the number of matches.
func (m *BodyMatch) HoldsIn(v any, ok bool) bool {
	if !ok {
		return false
	}
	v, ok = m.at(v)
	if !ok {
		return false
	}
	if m.value == nil {
		return true
	}
	if s, ok := v.(string); ok {
		return m.kind != valueJSON && s == *m.value
	}
	if m.kind == valueString || !m.hasWant {
		return false
	}
	return jsonEqual(v, m.want)
}

// jsonEqual reports whether a and b, decoded by DecodeBody, are the same JSON value:
// objects with the same keys (in any order) holding equal values, arrays of equal
// values in order, numbers of equal value however written (1, 1.0 and 1e0), strings,
// booleans and null as themselves.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(string(x), string(y))
	default: // string, bool, nil
		return a == b
	}
}

// numbersEqual compares two JSON numbers by value, exactly and in time linear in their
// length: 3, 3.0, 0.3e1 and 300e-2 alike, -0 as 0. A number whose exponent has more
// than 18 digits equals only its own text.
func numbersEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, ok1 := decimalOf(a)
	y, ok2 := decimalOf(b)
	return ok1 && ok2 && x == y
}

// decimal is a JSON number as 0.digits × 10^exp, digits without leading or trailing
// zeros (zero: no digits, exp 0, not negative).
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// decimalOf is the JSON number s (valid JSON: the decoder read it) as a decimal, and
// whether its exponent fits (at most 18 digits).
func decimalOf(s string) (decimal, bool) {
	var d decimal
	d.neg = strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		digits := strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
		if len(digits) > 18 {
			return d, false
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(exp, "+"), 10, 64)
		if err != nil {
			return d, false
		}
		d.exp = n
	}
	whole, frac, _ := strings.Cut(mant, ".")
	d.exp += int64(len(whole))
	all := whole + frac
	trimmed := strings.TrimLeft(all, "0")
	d.exp -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{}, true
	}
	return d, true
}

// at is the value at the match's path in v, and whether there is one.
func (m *BodyMatch) at(v any) (any, bool) {
	for _, st := range m.steps {
		switch node := v.(type) {
		case map[string]any:
			if st.key == "" {
				return nil, false
			}
			var ok bool
			if v, ok = node[st.key]; !ok {
				return nil, false
			}
		case []any:
			if st.key != "" || st.index >= len(node) {
				return nil, false
			}
			v = node[st.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// ValueIn is the JSON of the value at the match's path in a body decoded by
// DecodeBody, or nil when there is none (or the body is not JSON); a value of more than
// MaxShownValue bytes of JSON is shown as a string saying its kind and size ("[an
// object of 3100 bytes]").
func (m *BodyMatch) ValueIn(v any, ok bool) json.RawMessage {
	if !ok {
		return nil
	}
	v, ok = m.at(v)
	if !ok {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return ShownValue(b)
}

// Path is the match's JSON path as written (before "=").
func (m *BodyMatch) Path() string {
	p, _, _ := strings.Cut(m.raw, "=")
	return p
}

// bodyMatchOf turns one match.body entry, {"path": value}, into the BodyMatch of
// "path=value" that holds only for a value of the entry's type: a string for a string
// (compared as its text), that JSON for any other value (3 does not match "3", nor
// null the text "null").
func bodyMatchOf(path string, v BodyValue) (*BodyMatch, error) {
	if v == "" {
		v = "null"
	}
	if strings.Contains(path, "=") {
		return nil, fmt.Errorf(`a body path has no "=": give the value as the entry's value`)
	}
	val, kind := string(v), valueJSON
	var s string
	if v[0] == '"' && json.Unmarshal([]byte(v), &s) == nil {
		val, kind = s, valueString
	}
	m, err := ParseBodyMatch(path + "=" + val)
	if err == nil {
		m.kind = kind
	}
	return m, err
}
