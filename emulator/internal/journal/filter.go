package journal

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
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
	Body *fault.BodyMatch
	// Header and ResponseHeader, when set, select the entries whose request's, or
	// answer's, headers hold their match.
	Header, ResponseHeader *HeaderMatch
}

// The values Filter's enumerated fields take. The journal records CONNECT (a tunnel
// opened, or refused) besides the methods a fault may match, and api_key (a decryption
// request with its key) besides the scopes.
var (
	Methods  = append(slices.Clone(fault.Methods), "CONNECT")
	Services = fault.Services
	Scopes   = append(slices.Clone(fault.Scopes), "api_key")
)

// UnknownCode is the error of a filter's code that no answer carries: it names the
// closest of apperr.AnswerCodes and more (a world's faults' and journal's codes), any case.
func UnknownCode(code string, more []string) error {
	known := append(slices.Clip(apperr.AnswerCodes()), more...)
	hint := " (the codes are listed at /docs/errors; dropped and timeout name requests a fault dropped or held)"
	if best := yamlcheck.Closest(strings.ToLower(code), known); best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Errorf("code %q is not an error code hostemu answers%s", code, hint)
}

// CheckStatus is the error of a filter's status that no answer has (nil for 100–599, and
// 0, which names requests a fault dropped): it names the value as given, so a query's
// number too large for an int is named as sent.
func CheckStatus(status int64) error {
	if status < 0 || status > 599 || (status > 0 && status < 100) {
		return fmt.Errorf("status %d: want an HTTP status from 100 to 599, or 0 (dropped)", status)
	}
	return nil
}

// Validate checks a filter's values; the message names the field and, for an
// enumerated one, the closest value it takes.
func (f Filter) Validate() error {
	if f.Method != "" && !slices.Contains(Methods, strings.ToUpper(f.Method)) {
		return fmt.Errorf("method %q is not an HTTP method%s", f.Method, yamlcheck.Suggest(f.Method, Methods))
	}
	if f.Status != nil {
		if err := CheckStatus(int64(*f.Status)); err != nil {
			return err
		}
	}
	if f.Service != "" && !slices.Contains(Services, f.Service) {
		return fmt.Errorf("service %q is not a service%s", f.Service, yamlcheck.Suggest(f.Service, Services))
	}
	if f.Scope != "" && !slices.Contains(Scopes, f.Scope) {
		return fmt.Errorf("scope %q is not a scope%s", f.Scope, yamlcheck.Suggest(f.Scope, Scopes))
	}
	if f.Code != "" && !fault.ValidCode(f.Code) {
		return UnknownCode(f.Code, nil)
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
	return e.Seq > f.Since && f.failing(e) == 0 && (f.Body == nil || f.Body.Matches(e.Body))
}

// The conditions of a filter but its body, as bits of failing.
const (
	condMethod = 1 << iota
	condPath
	condStatus
	condService
	condScope
	condCode
	condHeader
	condResponseHeader
)

// failing is the set of f's conditions, but its body, that e does not hold: the one
// judgement of a query, an await and their near misses.
func (f Filter) failing(e *Entry) uint {
	var bits uint
	set := func(fails bool, bit uint) {
		if fails {
			bits |= bit
		}
	}
	set(f.Method != "" && !strings.EqualFold(f.Method, e.Method), condMethod)
	set(f.Path != "" && !fault.PathMatch(f.Path, e.Path), condPath)
	set(f.Status != nil && *f.Status != e.Status, condStatus)
	set(f.Service != "" && f.Service != e.Service, condService)
	set(f.Scope != "" && f.Scope != e.Scope, condScope)
	set(f.Code != "" && f.Code != e.ErrorCode, condCode)
	set(f.Header != nil && !f.Header.Matches(e.Headers), condHeader)
	set(f.ResponseHeader != nil && !f.ResponseHeader.Matches(e.Response.Headers), condResponseHeader)
	return bits
}

// ParseMatches sets f's body, header and response_header matches from their text, as a
// query and an await write them (nil: not given); field names the one that is wrong.
func (f *Filter) ParseMatches(body, header, responseHeader *string) (field string, err error) {
	if body != nil {
		if f.Body, err = fault.ParseBodyMatch(*body); err != nil {
			return "body", err
		}
	}
	for _, h := range [...]struct {
		key string
		in  *string
		out **HeaderMatch
	}{{"header", header, &f.Header}, {"response_header", responseHeader, &f.ResponseHeader}} {
		if h.in == nil {
			continue
		}
		if *h.out, err = ParseHeaderMatch(*h.in); err != nil {
			return h.key, err
		}
	}
	return "", nil
}

// MaxHeaderMatch bounds a header match, in bytes: Name:glob.
const MaxHeaderMatch = 512

// HeaderMatch is a header filter as a query or an await writes it: "Retry-After" holds
// when the header is there, "Retry-After:30" when its value is 30,
// "Content-Type:application/json*" when its value matches the glob. It is
// [fault.HeaderMatch], the one header matcher, with the text it was read from; spaces
// around the name and the value are ignored.
type HeaderMatch struct {
	fault.HeaderMatch
	raw string
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
	m, ok := fault.NewHeaderMatch(name, strings.TrimSpace(glob), hasValue)
	if !ok {
		return nil, fmt.Errorf("header match %q: %q is not a header name", s, name)
	}
	return &HeaderMatch{HeaderMatch: m, raw: s}, nil
}

// Matches reports whether h holds the match.
func (m *HeaderMatch) Matches(h Headers) bool {
	v, ok := h.Lookup(m.Name())
	return ok && m.Value(v)
}
