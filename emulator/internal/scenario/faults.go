package scenario

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

var faultKeys = []string{"match", "status", "code", "message", "delay", "delay_clock", "drop", "rate_limit", "retry_after", "timeout", "times", "probability", "after", "from", "until", "for"}

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
	if v, has := f["match"]; has {
		m, ok := d.Fields(v.Value, at+".match", "method", "path", "service", "scope", "host")
		known = known && ok
		for _, e := range []struct {
			key string
			dst *string
		}{{"method", &s.Match.Method}, {"path", &s.Match.Path}, {"service", &s.Match.Service}, {"scope", &s.Match.Scope}, {"host", &s.Match.Host}} {
			key, dst := e.key, e.dst
			if mv, has := m[key]; has {
				var ok bool
				*dst, ok = d.Str(mv.Value, at+".match."+key)
				good = good && ok
			}
		}
	}
	integer("status", &s.Status, -anyInt, anyInt) // fault.Validate names the range of statuses
	str("code", &s.Code)
	str("message", &s.Message)
	if v, has := f["delay"]; has {
		delay, ok := d.delay(v.Value, at+".delay")
		s.Delay = delay
		good = good && ok
	}
	str("delay_clock", &s.DelayClock)
	boolean("drop", &s.Drop)
	boolean("rate_limit", &s.RateLimit)
	boolean("timeout", &s.Timeout)
	integer("retry_after", &s.RetryAfter, 0, fault.MaxRetryAfterSeconds)
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
