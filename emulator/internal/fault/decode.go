package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

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
			return fmt.Errorf("delay: unknown key %q", k)
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
	if s.Status == 0 && s.Delay == nil && !s.Drop && !s.RateLimit && !s.Timeout {
		problems = append(problems, "a fault needs an action: status, delay, drop, rate_limit or timeout")
	}
	if s.Status != 0 && (s.Status < 400 || s.Status > 599) {
		problems = append(problems, fmt.Sprintf("status %d: want an error status from 400 to 599", s.Status))
	}
	if s.Code != "" && !ValidCode(s.Code) {
		problems = append(problems, fmt.Sprintf("code %q: want snake_case", s.Code))
	}
	if (s.Code != "" || s.Message != "") && s.Status == 0 {
		problems = append(problems, "code and message go with status")
	}
	n := 0
	for _, b := range []bool{s.Status != 0, s.Drop, s.RateLimit, s.Timeout} {
		if b {
			n++
		}
	}
	if n > 1 {
		problems = append(problems, "status, drop, rate_limit and timeout exclude each other")
	}
	switch {
	case s.DelayClock == "" || s.DelayClock == DelayWall:
	case s.DelayClock != DelayEmulated:
		problems = append(problems, fmt.Sprintf("delay_clock %q: want wall or emulated%s", s.DelayClock, yamlcheck.Suggest(s.DelayClock, []string{DelayWall, DelayEmulated})))
	case s.Delay == nil:
		problems = append(problems, "delay_clock goes with delay")
	}
	if s.RetryAfter != 0 && !s.RateLimit {
		problems = append(problems, "retry_after goes with rate_limit")
	}
	if s.RetryAfter < 0 || s.RetryAfter > MaxRetryAfterSeconds {
		problems = append(problems, fmt.Sprintf("retry_after: want seconds from 1 to %d", MaxRetryAfterSeconds))
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
		problems = append(problems, fmt.Sprintf("match.service %q: want hosting, cipher or edge%s", sv, yamlcheck.Suggest(sv, Services)))
	}
	if sc := s.Match.Scope; sc != "" {
		if _, ok := state.ParseScope(sc); !ok {
			problems = append(problems, fmt.Sprintf("match.scope %q: want read, deploy or admin", sc))
		}
	}
	if m := s.Match.Method; m != "" && strings.ToUpper(m) != m {
		problems = append(problems, fmt.Sprintf("match.method %q: want upper case, e.g. POST", m))
	} else if m != "" && !ValidMethod(m) {
		problems = append(problems, "match.method "+strconv.Quote(m)+": unknown method"+yamlcheck.Suggest(m, Methods))
	}
	if p := s.Match.Path; p != "" && !strings.HasPrefix(p, "/") && p != "*" {
		problems = append(problems, fmt.Sprintf("match.path %q: want a path starting with /", p))
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

// Methods are the HTTP methods a fault's match.method may name, sorted: the ones the
// emulated APIs and the edge answer. The control API and scenario files share this list
// through ValidMethod, so a typo such as PSOT is refused in both.
var Methods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}

// Services are the services a fault may match.
var Services = []string{"hosting", "cipher", "edge"}

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
