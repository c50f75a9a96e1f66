package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Filter selects entries. Zero fields select every entry.
type Filter struct {
	Method string // compared case-insensitively
	Path   string // `*` wildcards, as fault.PathMatch
	// Status, when set, is the answer's status (0: dropped or timed out by a fault).
	Status *int
	// Service ("hosting", "cipher", "edge"), Scope (a token scope, or "api_key") and
	// Code (the answer's error code) compare exactly.
	Service, Scope, Code string
	// Since selects the entries whose Seq is greater.
	Since uint64
	// Limit, when more than 0, keeps the first Limit entries selected, oldest first:
	// with Since, it pages forward. Count ignores it.
	Limit int
	// Body, when set, selects the entries whose body is JSON holding its match.
	Body *BodyMatch
	// Header and ResponseHeader, when set, select the entries whose request's, or
	// answer's, headers hold their match.
	Header, ResponseHeader *HeaderMatch
}

// Bounds of the journal's query filters.
const (
	MaxBodyMatch = 512 // bytes of a body match: path=value
	MaxBodyDepth = 32  // steps of a body match's path
)

// The values Filter's enumerated fields take. The journal records CONNECT (a tunnel
// opened, or refused) besides the methods a fault may match.
var (
	Methods  = append(slices.Clone(fault.Methods), "CONNECT")
	Services = []string{"hosting", "cipher", "edge"}
	Scopes   = []string{"read", "deploy", "admin", "api_key"}
)

// Validate checks a filter's values; the message names the field and, for an
// enumerated one, the closest value it takes.
func (f Filter) Validate() error {
	if f.Method != "" && !slices.Contains(Methods, strings.ToUpper(f.Method)) {
		return fmt.Errorf("method %q is not an HTTP method%s", f.Method, yamlcheck.Suggest(f.Method, Methods))
	}
	if f.Status != nil && (*f.Status < 0 || *f.Status > 599 || (*f.Status > 0 && *f.Status < 100)) {
		return fmt.Errorf("status %d: want an HTTP status from 100 to 599, or 0 (dropped)", *f.Status)
	}
	if f.Service != "" && !slices.Contains(Services, f.Service) {
		return fmt.Errorf("service %q is not a service%s", f.Service, yamlcheck.Suggest(f.Service, Services))
	}
	if f.Scope != "" && !slices.Contains(Scopes, f.Scope) {
		return fmt.Errorf("scope %q is not a scope%s", f.Scope, yamlcheck.Suggest(f.Scope, Scopes))
	}
	if f.Code != "" && !fault.ValidCode(f.Code) {
		return fmt.Errorf("code %q: want an error code in snake_case", f.Code)
	}
	if f.Limit < 0 {
		return errors.New("limit: must be 1 or more")
	}
	if len(f.Path) > fault.MaxGlob {
		return fmt.Errorf("path: a pattern is at most %d bytes, not %d", fault.MaxGlob, len(f.Path))
	}
	return nil
}

func (f Filter) matches(e *Entry) bool {
	return e.Seq > f.Since &&
		(f.Method == "" || strings.EqualFold(f.Method, e.Method)) &&
		(f.Path == "" || fault.PathMatch(f.Path, e.Path)) &&
		(f.Status == nil || *f.Status == e.Status) &&
		(f.Service == "" || f.Service == e.Service) &&
		(f.Scope == "" || f.Scope == e.Scope) &&
		(f.Code == "" || f.Code == e.ErrorCode) &&
		(f.Header == nil || f.Header.Matches(e.Headers)) &&
		(f.ResponseHeader == nil || f.ResponseHeader.Matches(e.Response.Headers)) &&
		(f.Body == nil || f.Body.Matches(e.Body))
}

// MaxHeaderMatch bounds a header match, in bytes: Name:glob.
const MaxHeaderMatch = 512

// HeaderMatch selects entries by one header: "Retry-After" holds when the header is
// there, "Retry-After:30" when its value is 30, "Content-Type:application/json*" when
// its value matches the glob (`*` wildcards, as paths). The name is compared in any
// case, the value as written; spaces around the value are ignored.
type HeaderMatch struct {
	name, glob string
	hasValue   bool
	raw        string
}

// String is the match as written.
func (m *HeaderMatch) String() string { return m.raw }

// ParseHeaderMatch reads "Name" or "Name:glob"; the error says what is wrong.
func ParseHeaderMatch(s string) (*HeaderMatch, error) {
	if len(s) > MaxHeaderMatch {
		return nil, fmt.Errorf("a header match is at most %d bytes", MaxHeaderMatch)
	}
	name, glob, hasValue := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, errors.New(`a header match needs a header name, e.g. "Retry-After" or "Retry-After:30"`)
	}
	for i := 0; i < len(name); i++ {
		if !tokenByte(name[i]) {
			return nil, fmt.Errorf("header match %q: %q is not a header name", s, name)
		}
	}
	return &HeaderMatch{name: name, glob: strings.TrimSpace(glob), hasValue: hasValue, raw: s}, nil
}

// tokenByte reports whether c may be in a header name (RFC 9110's tchar).
func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Matches reports whether h holds the match.
func (m *HeaderMatch) Matches(h Headers) bool {
	for _, x := range h {
		if strings.EqualFold(x.Name, m.name) {
			return !m.hasValue || fault.PathMatch(m.glob, x.Value)
		}
	}
	return false
}

// BodyMatch selects request bodies by the JSON value at a path: "target=production"
// holds for {"target":"production"}, "meta.branch=main" for {"meta":{"branch":"main"}},
// "files[0].path=/index.html" for a first file of that path, and a path alone
// ("meta.commit") for a body where it exists. A leading "$." is allowed. A string is
// compared with the text after "=", any other value with its JSON (3, true, null).
type BodyMatch struct {
	steps []step
	value *string
	raw   string
}

// step is one step of a body path: a key, or an index when key is "" and index >= 0.
type step struct {
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
			m.steps = append(m.steps, step{key: key, index: -1})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 || idx != strconv.Itoa(n) {
				return nil, fmt.Errorf("body match %q: want [n], an index from 0", s)
			}
			m.steps = append(m.steps, step{index: n})
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
func (m *BodyMatch) Matches(body string) bool { return m.HoldsIn(fault.DecodeBody(body)) }

// HoldsIn is Matches for a body decoded by fault.DecodeBody (ok false: not JSON).
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
		return s == *m.value
	}
	b, err := json.Marshal(v)
	return err == nil && bytes.Equal(b, []byte(*m.value))
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
