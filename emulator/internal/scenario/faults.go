package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// answerKeys are a fault's answer fields, the keys of a then step too (with "pass").
var answerKeys = fault.AnswerFields

var faultKeys = append([]string{"match", "times", "probability", "after", "from", "until", "for", "then"}, answerKeys...)

var matchKeys = []string{"method", "path", "service", "scope", "host", "operation", "query", "headers", "body", "token"}

// faults reads the faults section: the control API's fault objects.
func (d *decoder) faults(n *yaml.Node) ([]fault.Spec, bool) {
	items, ok := d.seq(n, "faults")
	if !ok {
		return nil, false
	}
	specs := make([]fault.Spec, 0, len(items))
	good := true
	for i, item := range items {
		spec, ok := d.fault(item, fmt.Sprintf("faults[%d]", i))
		good = good && ok
		specs = append(specs, spec)
	}
	return specs, good
}

func (d *decoder) fault(n *yaml.Node, at string) (fault.Spec, bool) {
	var s fault.Spec
	// an unknown key is one problem among others: the keys known are checked too, so
	// that every problem of the fault is reported at once
	f, known := d.Fields(n, at, faultKeys...)
	if f == nil {
		return s, false
	}
	good := true // the values of the keys known
	integer := func(key string, dst *int, lo, hi int64) {
		if v, has := f[key]; has {
			var ok bool
			*dst, ok = d.integer(v.Value, at+"."+key, lo, hi)
			good = good && ok
		}
	}
	if v, has := f["match"]; has {
		m, ok := d.Fields(v.Value, at+".match", matchKeys...)
		known = known && ok
		for _, e := range []struct {
			key string
			dst *string
		}{{"method", &s.Match.Method}, {"path", &s.Match.Path}, {"service", &s.Match.Service}, {"scope", &s.Match.Scope}, {"host", &s.Match.Host}, {"operation", &s.Match.Operation}, {"token", &s.Match.Token}} {
			key, dst := e.key, e.dst
			if mv, has := m[key]; has {
				var ok bool
				*dst, ok = d.Str(mv.Value, at+".match."+key)
				good = good && ok
			}
		}
		if mv, has := m["query"]; has {
			var ok bool
			s.Match.Query, ok = d.strings(mv.Value, at+".match.query")
			good = good && ok
		}
		if mv, has := m["headers"]; has {
			var ok bool
			s.Match.Headers, ok = d.strings(mv.Value, at+".match.headers")
			good = good && ok
		}
		if mv, has := m["body"]; has {
			var ok bool
			s.Match.Body, ok = d.bodyValues(mv.Value, at+".match.body")
			good = good && ok
		}
	}
	var own fault.Step
	good = d.answer(f, at, &own) && good
	s.Status, s.Code, s.Message, s.Error, s.Delay, s.DelayClock = own.Status, own.Code, own.Message, own.Error, own.Delay, own.DelayClock
	s.Drop, s.RateLimit, s.RetryAfter, s.Timeout, s.Headers, s.Body = own.Drop, own.RateLimit, own.RetryAfter, own.Timeout, own.Headers, own.Body
	s.Break, s.AfterBytes, s.BytesPerSecond = own.Break, own.AfterBytes, own.BytesPerSecond
	if v, has := f["then"]; has {
		items, ok := d.seq(v.Value, at+".then")
		good = good && ok
		for i, item := range items {
			where := fmt.Sprintf("%s.then[%d]", at, i)
			sf, ok := d.Fields(item, where, append([]string{"pass"}, answerKeys...)...)
			known = known && ok
			if sf == nil {
				good = false
				continue
			}
			var st fault.Step
			good = d.answer(sf, where, &st) && good
			if pv, has := sf["pass"]; has {
				var ok bool
				st.Pass, ok = d.Bool(pv.Value, where+".pass")
				good = good && ok
			}
			s.Then = append(s.Then, st)
		}
	}
	integer("times", &s.Times, 0, anyInt)
	integer("after", &s.After, 0, anyInt)
	instant := func(key string, dst *time.Time) {
		if v, has := f[key]; has {
			str, ok := d.Str(v.Value, at+"."+key)
			if ok {
				t, err := time.Parse(time.RFC3339, str)
				if err != nil {
					d.Addf(v.Value, "%s.%s: %q: want an RFC 3339 instant such as 2030-01-01T00:02:00Z", at, key, str)
					ok = false
				}
				*dst = t
			}
			good = good && ok
		}
	}
	instant("from", &s.From)
	instant("until", &s.Until)
	if v, has := f["for"]; has {
		dur, ok := d.duration(v.Value, at+".for")
		s.For = fault.Duration(dur)
		good = good && ok
	}
	if v, has := f["probability"]; has {
		p, ok := d.Number(v.Value, at+".probability")
		if ok && (p < 0 || p > 1) {
			d.Addf(v.Value, "%s.probability: %v is out of range: want a number from 0 to 1", at, p)
			ok = false
		}
		s.Probability = &p
		good = good && ok
	}
	if !good {
		return s, false // a value's problem is named already; the whole would repeat it
	}
	// the fault checked as a whole, beside any unknown key: both are reported at once
	if err := s.Validate(); err != nil {
		d.Addf(n, "%s: %v", at, err)
		return s, false
	}
	return s, known
}

// answer reads the answer fields of a fault or of a then step into st.
func (d *decoder) answer(f map[string]yamlcheck.Field, at string, st *fault.Step) bool {
	good := true
	str := func(key string, dst *string) {
		if v, has := f[key]; has {
			var ok bool
			*dst, ok = d.Str(v.Value, at+"."+key)
			good = good && ok
		}
	}
	boolean := func(key string, dst *bool) {
		if v, has := f[key]; has {
			var ok bool
			*dst, ok = d.Bool(v.Value, at+"."+key)
			good = good && ok
		}
	}
	integer := func(key string, dst *int, lo, hi int64) {
		if v, has := f[key]; has {
			var ok bool
			*dst, ok = d.integer(v.Value, at+"."+key, lo, hi)
			good = good && ok
		}
	}
	integer("status", &st.Status, -anyInt, anyInt) // fault.Validate names the range of statuses
	str("code", &st.Code)
	str("message", &st.Message)
	str("error", &st.Error)
	if v, has := f["delay"]; has {
		delay, ok := d.delay(v.Value, at+".delay")
		st.Delay = delay
		good = good && ok
	}
	str("delay_clock", &st.DelayClock)
	boolean("drop", &st.Drop)
	boolean("rate_limit", &st.RateLimit)
	boolean("timeout", &st.Timeout)
	integer("retry_after", &st.RetryAfter, 0, fault.MaxRetryAfterSeconds)
	str("break", &st.Break)
	integer("after_bytes", &st.AfterBytes, 0, fault.MaxAfterBytes)
	integer("bytes_per_second", &st.BytesPerSecond, 0, fault.MaxBytesPerSecond)
	if v, has := f["headers"]; has {
		var ok bool
		st.Headers, ok = d.strings(v.Value, at+".headers")
		good = good && ok
	}
	if v, has := f["body"]; has {
		n := yamlcheck.Follow(v.Value)
		switch {
		case n == nil:
			good = false
		case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
			st.Body = &fault.Payload{Text: n.Value}
		default:
			val, ok := d.jsonValue(n, at+".body")
			if ok {
				st.Body = &fault.Payload{JSON: true, Text: string(val)}
			}
			good = good && ok
		}
	}
	return good
}

// strings reads a mapping of names to strings (match.query, match.headers, headers).
func (d *decoder) strings(n *yaml.Node, at string) (map[string]string, bool) {
	entries, ok := d.Entries(n, at, "*")
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		v, vok := d.Str(e.Value, at+"."+e.Key.Value)
		ok = ok && vok
		out[e.Key.Value] = v
	}
	return out, ok
}

// bodyValues reads match.body: JSON paths to any value.
func (d *decoder) bodyValues(n *yaml.Node, at string) (map[string]fault.BodyValue, bool) {
	entries, ok := d.Entries(n, at, "*")
	out := make(map[string]fault.BodyValue, len(entries))
	for _, e := range entries {
		v, vok := d.jsonValue(e.Value, at+"."+e.Key.Value)
		ok = ok && vok
		out[e.Key.Value] = v
	}
	return out, ok
}

// jsonValue reads any YAML value as the JSON value it stands for, a number as written
// (yamlJSON).
func (d *decoder) jsonValue(n *yaml.Node, at string) (fault.BodyValue, bool) {
	v, err := yamlJSON(n)
	if err != nil {
		d.Addf(n, "%s: %v", at, err)
		return "", false
	}
	bv, err := fault.BodyValueOf(v)
	if err != nil {
		d.Addf(n, "%s: want a value JSON can hold: %v", at, err)
		return "", false
	}
	return bv, true
}

// delay reads "750ms" or {min, max} with fault.Delay's own reader, after bounding the
// durations as every other duration of a scenario is bounded.
func (d *decoder) delay(n *yaml.Node, at string) (*fault.Delay, bool) {
	n = yamlcheck.Follow(n)
	if n == nil {
		return nil, false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if _, ok := d.duration(n, at); !ok {
			return nil, false
		}
	case yaml.MappingNode:
		f, ok := d.Fields(n, at, "min", "max")
		if !ok {
			return nil, false
		}
		for _, k := range []string{"min", "max"} {
			v, has := f[k]
			if !has {
				d.Addf(n, "%s: a range needs both min and max", at)
				return nil, false
			}
			if _, ok := d.duration(v.Value, at+"."+k); !ok {
				return nil, false
			}
		}
	default:
		d.Addf(n, "%s: want a duration such as 750ms or {min: 100ms, max: 2s}, got %s", at, yamlcheck.Describe(n))
		return nil, false
	}
	var delay fault.Delay
	if err := delay.UnmarshalYAML(n); err != nil {
		d.Addf(n, "%s: %v", at, err)
		return nil, false
	}
	return &delay, true
}

// yamlJSON is the value of n for encoding/json, as n.Decode gives it but for numbers: an
// integer or a float written as JSON writes it is kept as written (json.Number), so that
// 100000000000000000001 is not rounded to a float64 nor 1e400 made a string, and 1.10
// stays 1.10. A number in a form JSON has not (0x1F, +5, .inf) is the value YAML gives
// it; a mapping with a key that is not a plain string (a merge key, 1:) is decoded as
// before. The aliases it follows expand no further than the file's own bound allows
// (Parse refuses a file whose aliases expand past it before any value is read).
func yamlJSON(n *yaml.Node) (any, error) {
	n = yamlcheck.Follow(n)
	if n == nil {
		return nil, errors.New("aliases nest too deep")
	}
	switch n.Kind {
	case yaml.ScalarNode:
		// a plain scalar YAML could not read as a float (1e400) resolves to a string
		plain := n.Style&^yaml.FlowStyle == 0 // no quotes, no block style, no tag given
		if t := n.ShortTag(); isJSONNumber(n.Value) && (t == "!!int" || t == "!!float" || plain && t == "!!str") {
			return json.Number(n.Value), nil
		}
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := yamlJSON(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		if plainKeys(n) {
			out := make(map[string]any, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				v, err := yamlJSON(n.Content[i+1])
				if err != nil {
					return nil, err
				}
				out[yamlcheck.Follow(n.Content[i]).Value] = v
			}
			return out, nil
		}
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// plainKeys reports whether every key of the mapping n is a string scalar (no merge
// key, no number or null key), and no key comes twice.
func plainKeys(n *yaml.Node) bool {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i < len(n.Content); i += 2 {
		k := yamlcheck.Follow(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || seen[k.Value] {
			return false
		}
		seen[k.Value] = true
	}
	return true
}

// isJSONNumber reports whether s is a number as RFC 8259 writes one:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. Valid JSON that starts with '-' or a
// digit and ends with a digit (no space around it) is such a number.
func isJSONNumber(s string) bool {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	return s != "" && (s[0] == '-' || isDigit(s[0])) && isDigit(s[len(s)-1]) && json.Valid([]byte(s))
}
