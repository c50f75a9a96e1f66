package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// MaxTimeoutSeconds bounds how long a timeout fault holds a request.
const MaxTimeoutSeconds = 60

// The clocks a fault's delay may run on (Spec.DelayClock).
const (
	DelayWall     = "wall"
	DelayEmulated = "emulated"
)

// MaxRetryAfterSeconds bounds a rate_limit fault's retry_after (a day).
const MaxRetryAfterSeconds = 86400

// MaxDelay bounds a fault's delay, on either clock (a day, as retry_after): a request is
// held no longer than that, and "999999h" is a typo, not a test that hangs.
const MaxDelay = 24 * time.Hour

// UnmarshalJSON reads "750ms" or {"min":"100ms","max":"2s"}.
func (d *Delay) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return d.parseFixed(s)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err == nil {
		for k := range keys {
			if k != "min" && k != "max" {
				return fmt.Errorf("delay: unknown key %q%s", k, yamlcheck.Suggest(k, []string{"max", "min"}))
			}
		}
	}
	var r struct {
		Min *string `json:"min"`
		Max *string `json:"max"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return errors.New(`delay must be a duration string such as "750ms" or {"min","max"}`)
	}
	return d.parseRange(r.Min, r.Max)
}

// UnmarshalJSON reads a duration string: "2m", "90s", "1d".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`for must be a duration string such as "2m"`)
	}
	v, err := clock.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("for: %v", err)
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML reads the same two forms from YAML.
func (d *Delay) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return d.parseFixed(n.Value)
	}
	var r struct {
		Min *string `yaml:"min"`
		Max *string `yaml:"max"`
	}
	if n.Kind != yaml.MappingNode {
		return errors.New(`delay must be a duration such as 750ms or {min, max}`)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "min", "max":
		default:
			return fmt.Errorf("delay: unknown key %q%s", k, yamlcheck.Suggest(k, []string{"max", "min"}))
		}
	}
	if err := n.Decode(&r); err != nil {
		return errors.New(`delay must be a duration such as 750ms or {min, max}`)
	}
	return d.parseRange(r.Min, r.Max)
}

// MarshalJSON writes the fixed form when Min == Max, else the range.
func (d Delay) MarshalJSON() ([]byte, error) {
	if d.Min == d.Max {
		return json.Marshal(d.Min.String())
	}
	return json.Marshal(map[string]string{"min": d.Min.String(), "max": d.Max.String()})
}

func (d *Delay) parseFixed(s string) error {
	v, err := clock.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("delay: %v", err)
	}
	d.Min, d.Max = v, v
	return nil
}

func (d *Delay) parseRange(minS, maxS *string) error {
	if minS == nil || maxS == nil {
		return errors.New("delay: a range needs both min and max")
	}
	lo, err := clock.ParseDuration(*minS)
	if err != nil {
		return fmt.Errorf("delay.min: %v", err)
	}
	hi, err := clock.ParseDuration(*maxS)
	if err != nil {
		return fmt.Errorf("delay.max: %v", err)
	}
	if hi < lo {
		return errors.New("delay: max is less than min")
	}
	d.Min, d.Max = lo, hi
	return nil
}

// Validate checks a fault as users wrote it. The message names the offending field.
func (s *Spec) Validate() error {
	var problems []string
	if len(s.Then) > 0 {
		if s.answer().set() {
			problems = append(problems, "then excludes the answer fields ("+strings.Join(AnswerFields, ", ")+"): give them in its steps")
		}
		if s.Times != 0 {
			problems = append(problems, "then excludes times: the fault is spent after its last step")
		}
		if len(s.Then) > MaxThen {
			problems = append(problems, fmt.Sprintf("then: at most %d steps", MaxThen))
		}
		for i, st := range s.Then {
			problems = append(problems, st.problems(fmt.Sprintf("then[%d].", i), true)...)
		}
	} else {
		problems = append(problems, s.answer().problems("", false)...)
	}
	if s.After < 0 {
		problems = append(problems, "after: must be 0 or more")
	}
	if s.For < 0 {
		problems = append(problems, "for: must be a duration of 0 or more")
	}
	if s.For > 0 && (!s.From.IsZero() || !s.Until.IsZero()) {
		problems = append(problems, "for excludes from and until: give a window one way")
	}
	if !s.From.IsZero() && !s.Until.IsZero() && !s.Until.After(s.From) {
		problems = append(problems, "until must be later than from")
	}
	if s.Times < 0 {
		problems = append(problems, "times: must be 0 (unlimited) or more")
	}
	if p := s.Probability; p != nil && !(*p >= 0 && *p <= 1) { // also refuses NaN
		problems = append(problems, "probability: must be between 0 and 1")
	}
	if sv := s.Match.Service; sv != "" && !slices.Contains(Services, sv) {
		problems = append(problems, fmt.Sprintf("match.service %q: want hosting, cipher or edge%s", sv, yamlcheck.DidYouMean(sv, Services)))
	}
	if sc := s.Match.Scope; sc != "" {
		if _, ok := state.ParseScope(sc); !ok {
			problems = append(problems, fmt.Sprintf("match.scope %q: not a token scope%s", sc, yamlcheck.Suggest(sc, Scopes)))
		}
	}
	if m := s.Match.Method; m != "" && strings.ToUpper(m) != m {
		problems = append(problems, fmt.Sprintf("match.method %q: want upper case, e.g. POST", m))
	} else if m != "" && !ValidMethod(m) {
		problems = append(problems, "match.method "+strconv.Quote(m)+": unknown method"+yamlcheck.Suggest(m, Methods))
	}
	if p := s.Match.Path; p != "" && !strings.HasPrefix(p, "/") && p != "*" {
		problems = append(problems, fmt.Sprintf("match.path %q: want a path starting with /", p))
	} else if len(p) <= MaxGlob && !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, "match.service") }) {
		_, more := compile(s.Match)
		problems = append(problems, more...)
	}
	for _, g := range []struct{ key, glob string }{{"match.path", s.Match.Path}, {"match.host", s.Match.Host}} {
		if len(g.glob) > MaxGlob {
			problems = append(problems, fmt.Sprintf("%s: a pattern is at most %d bytes, not %d", g.key, MaxGlob, len(g.glob)))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Bounds of a fault's answers.
const (
	MaxThen         = 32       // steps of a then sequence
	MaxPayloadBytes = 64 << 10 // a replacement body
)

// AnswerFields are a fault's answer fields as users write them (JSON and YAML keys), in
// order: the fields of Step but pass, which Spec has too. Step is the one list: a then
// sequence excludes these beside it, each of its steps takes them (and pass), a
// scenario's fault and step take them as keys, and answer copies them.
var AnswerFields, answerField = answerFields()

// answerFields are AnswerFields, and each one's index in Step paired with the index of
// Spec's field of the same name and type (answerField).
func answerFields() (names []string, pairs [][2]int) {
	st, sp := reflect.TypeFor[Step](), reflect.TypeFor[Spec]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Name == "Pass" {
			continue
		}
		g, ok := sp.FieldByName(f.Name)
		if !ok || g.Type != f.Type || g.Tag.Get("json") != f.Tag.Get("json") || len(g.Index) != 1 {
			panic("fault: Spec has no answer field " + f.Name + " as Step has it") // caught by the package's tests
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
		pairs = append(pairs, [2]int{i, g.Index[0]})
	}
	return names, pairs
}

// answer is the spec's own answer fields as a step.
func (s *Spec) answer() Step {
	var st Step
	src, dst := reflect.ValueOf(s).Elem(), reflect.ValueOf(&st).Elem()
	for _, f := range answerField {
		dst.Field(f[0]).Set(src.Field(f[1]))
	}
	return st
}

// set reports whether any answer field is given (pass included).
func (st Step) set() bool { return !reflect.ValueOf(st).IsZero() }

// problems checks one answer; at prefixes the field names ("then[1].").
func (st Step) problems(at string, step bool) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, at+fmt.Sprintf(format, args...)) }
	if st.Pass {
		if c := st; func() bool { c.Pass = false; return c.set() }() {
			add("pass excludes every other field of the step")
		}
		return problems
	}
	// headers of no entries are no headers: the listing writes them as absent, and a
	// fault valid only for an empty map would list as one that is not
	if st.Status == 0 && st.Error == "" && st.Delay == nil && !st.Drop && !st.RateLimit && !st.Timeout && len(st.Headers) == 0 && st.Body == nil && st.Break == "" {
		want := "status, error, delay, drop, rate_limit, timeout, headers, body or break"
		if step {
			want += `, or "pass": true`
		}
		problems = append(problems, strings.TrimSuffix(at, ".")+" needs an action: "+want)
		if !step {
			problems[len(problems)-1] = "a fault needs an action: " + want + ", or a then sequence"
		}
	}
	if st.Status != 0 && (st.Status < 400 || st.Status > 599) {
		add("status %d: want an error status from 400 to 599", st.Status)
	}
	if st.Code != "" && !ValidCode(st.Code) {
		add("code %q: want snake_case", st.Code)
	}
	if st.Code != "" && st.Status == 0 {
		add("code goes with status")
	}
	if st.Message != "" && st.Status == 0 && st.Error == "" {
		add("message goes with status or error")
	}
	var errStatus int
	if st.Error != "" {
		if d, ok := apperr.Lookup(apperr.Code(st.Error)); ok {
			errStatus = d.Status
		} else {
			add("error %q: not a documented error code%s", st.Error, yamlcheck.Suggest(st.Error, errorCodes()))
		}
		if st.Status != 0 || st.Code != "" {
			add("error excludes status and code: the code brings its status")
		}
	}
	n := 0
	for _, b := range []bool{st.Status != 0 || st.Error != "", st.Drop, st.RateLimit, st.Timeout} {
		if b {
			n++
		}
	}
	if n > 1 {
		add("status (or error), drop, rate_limit and timeout exclude each other")
	}
	if (st.Drop || st.Timeout) && (len(st.Headers) > 0 || st.Body != nil) {
		add("headers and body go with an answer: drop and timeout send none")
	}
	switch {
	case st.DelayClock == "" || st.DelayClock == DelayWall:
	case st.DelayClock != DelayEmulated:
		add("delay_clock %q: want wall or emulated%s", st.DelayClock, yamlcheck.DidYouMean(st.DelayClock, []string{DelayWall, DelayEmulated}))
	case st.Delay == nil:
		add("delay_clock goes with delay")
	}
	if st.Delay != nil && st.Delay.Max > MaxDelay {
		add("delay %s: at most %s", st.Delay.Max, MaxDelay)
	}
	if st.RetryAfter != 0 && !st.RateLimit && errStatus != 429 && errStatus != 503 {
		add("retry_after goes with rate_limit, or an error answered 429 or 503")
	}
	if st.RetryAfter < 0 || st.RetryAfter > MaxRetryAfterSeconds {
		add("retry_after: want seconds from 1 to %d", MaxRetryAfterSeconds)
	}
	if len(st.Headers) > MaxMatchEntries {
		add("headers: at most %d", MaxMatchEntries)
	}
	keys := sortedKeys(st.Headers)
	for i, k := range keys {
		v := st.Headers[k]
		switch {
		case !ValidHeaderName(k):
			add("headers %q: not a header name", k)
		case strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Transfer-Encoding") || strings.EqualFold(k, "Connection"):
			add("headers %q: set by hostemu from the body; change the body instead", k)
		case len(v) > MaxGlob || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			add("headers %q: want a value of at most %d bytes without control characters", k, MaxGlob)
		case strings.Trim(v, " \t") != v:
			// HTTP/1.1 trims it and HTTP/2 sends it as it is: what the client gets, and
			// what the journal says it got, would depend on the protocol
			add("headers %q: value %q has white space at its ends: write it without", k, v)
		}
		// names are case-insensitive: both would be set, and the answer carry either
		if j := slices.IndexFunc(keys[:i], func(o string) bool { return strings.EqualFold(o, k) }); j >= 0 {
			add("headers %q and %q: one header twice (names are case-insensitive)", keys[j], k)
		}
	}
	if st.Body != nil && len(st.Body.Text) > MaxPayloadBytes {
		add("body: at most %d bytes", MaxPayloadBytes)
	}
	problems = append(problems, st.breakProblems(at)...)
	return problems
}

// The ways a fault's break may break the wire (Toxiproxy's toxics, WireMock's Fault),
// each carried out by one small type of the HTTP layer's registry.
const (
	BreakReset     = "reset"      // the connection reset before any byte of the answer
	BreakEmpty     = "empty"      // status line and headers, then closed with no body
	BreakTruncate  = "truncate"   // the real Content-Length, closed after AfterBytes
	BreakMalformed = "malformed"  // 200 with a body that is not JSON
	BreakSlow      = "slow"       // the real answer at BytesPerSecond
	BreakWrongType = "wrong_type" // the real body as text/html
)

// Breaks are the values of break.
var Breaks = []string{BreakReset, BreakEmpty, BreakTruncate, BreakMalformed, BreakSlow, BreakWrongType}

// Bounds of break's fields.
const (
	MaxAfterBytes     = 1 << 20
	MaxBytesPerSecond = 10 << 20
)

func (st Step) breakProblems(at string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, at+fmt.Sprintf(format, args...)) }
	if st.Break != "" && !slices.Contains(Breaks, st.Break) {
		add("break %q: not a way to break%s", st.Break, yamlcheck.Suggest(st.Break, Breaks))
	}
	if st.Break != "" && (st.Drop || st.Timeout || st.RateLimit) {
		add("break excludes drop, timeout and rate_limit")
	}
	if st.Break == BreakReset && (st.Status != 0 || st.Error != "" || len(st.Headers) > 0 || st.Body != nil) {
		add("break reset sends no answer: it excludes status, error, headers and body")
	}
	if st.Break == BreakMalformed && st.Body != nil {
		add("break malformed writes its own body: it excludes body")
	}
	if st.AfterBytes != 0 && st.Break != BreakTruncate {
		add("after_bytes goes with break truncate")
	}
	if st.AfterBytes < 0 || st.AfterBytes > MaxAfterBytes {
		add("after_bytes: want bytes from 1 to %d (absent: half the body)", MaxAfterBytes)
	}
	if st.BytesPerSecond != 0 && st.Break != BreakSlow {
		add("bytes_per_second goes with break slow")
	}
	if st.Break == BreakSlow && (st.BytesPerSecond < 1 || st.BytesPerSecond > MaxBytesPerSecond) {
		add("break slow needs bytes_per_second from 1 to %d", MaxBytesPerSecond)
	}
	return problems
}

// errorCodes are the catalogue's codes, for the closest one.
func errorCodes() []string {
	var out []string
	for _, d := range apperr.Catalogue() {
		out = append(out, string(d.Code))
	}
	return out
}

// Methods are the HTTP methods a fault's match.method may name, sorted: the ones the
// emulated APIs and the edge answer. The control API and scenario files share this list
// through ValidMethod, so a typo such as PSOT is refused in both.
var Methods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}

// Services are the services a fault may match.
var Services = []string{"hosting", "cipher", "edge"}

// Scopes are the token scopes a fault's match.scope may name.
var Scopes = []string{string(state.ScopeRead), string(state.ScopeDeploy), string(state.ScopeAdmin)}

// ValidMethod reports whether m is one of Methods (upper case, as users write it).
func ValidMethod(m string) bool { return slices.Contains(Methods, m) }

// ValidCode reports whether s can be an error code: snake_case, starting with a letter,
// at most 64 characters (build_failed, service_unavailable). Faults, scenarios and the
// docs pages all hold codes to it.
func ValidCode(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && i > 0, r == '_' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
