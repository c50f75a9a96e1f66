package scenario

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// maxPerSecond keeps rate × burst far from float and integer overflow in the limiter.
const maxPerSecond = 1e9

// certificates reads the certificates section over base's values (nil base: every key
// is required).
func (d *decoder) certificates(n *yaml.Node, base *Scenario) (Certificates, bool) {
	var c Certificates
	if base != nil {
		c = base.Certificates
	}
	f, known := d.Fields(n, "certificates", "issuer", "valid_for", "renew_before", "renewal")
	if f == nil {
		return c, false
	}
	var ok bool
	good := d.require(n, base, f, "certificates", "issuer", "valid_for", "renew_before") && known
	if v, has := f["issuer"]; has {
		c.Issuer, ok = d.Word(v.Value, "certificates.issuer")
		good = good && ok
	}
	if v, has := f["valid_for"]; has {
		c.ValidFor, ok = d.duration(v.Value, "certificates.valid_for")
		if ok && c.ValidFor <= 0 {
			d.Addf(v.Value, "certificates.valid_for: %s is out of range: want more than 0s and at most %dd", fmtDuration(c.ValidFor), maxDays)
			ok = false
		}
		good = good && ok
	}
	if v, has := f["renew_before"]; has {
		c.RenewBefore, ok = d.duration(v.Value, "certificates.renew_before")
		good = good && ok
	}
	if v, has := f["renewal"]; has {
		good = d.renewal(v.Value, &c) && good
	}
	if good && c.RenewBefore >= c.ValidFor {
		at := n
		if v, has := f["renew_before"]; has {
			at = v.Value
		} else if v, has := f["valid_for"]; has {
			at = v.Value
		}
		d.Addf(at, "certificates: renew_before (%s) must be less than valid_for (%s)", fmtDuration(c.RenewBefore), fmtDuration(c.ValidFor))
		good = false
	}
	return c, good
}

// renewal reads certificates.renewal: {fail: true, error: {code, message}}.
func (d *decoder) renewal(n *yaml.Node, c *Certificates) bool {
	const at = "certificates.renewal"
	f, good := d.Fields(n, at, "fail", "error")
	if f == nil {
		return false
	}
	var ok bool
	c.RenewalFails, c.RenewalError = false, nil
	if v, has := f["fail"]; has {
		c.RenewalFails, ok = d.Bool(v.Value, at+".fail")
		good = good && ok
	}
	if v, has := f["error"]; has {
		if !c.RenewalFails {
			d.Addf(v.Key, "%s.error: only a failing renewal (fail: true) carries error", at)
			return false
		}
		se, ok := d.stepError(v.Value, at+".error", lifecycleKind{defaultCode: "renewal_failed"})
		c.RenewalError = se
		good = good && ok
	}
	return good
}

// rateLimits reads the rate_limits section over base's values (nil base: every key is
// required).
func (d *decoder) rateLimits(n *yaml.Node, base *Scenario) (RateLimits, bool) {
	var rl RateLimits
	if base != nil {
		rl = base.RateLimits
	}
	f, known := d.Fields(n, "rate_limits", "enabled", "per_token", "per_ip", "burst", "per_scope")
	if f == nil {
		return rl, false
	}
	var ok bool
	good := d.require(n, base, f, "rate_limits", "enabled", "per_token", "per_ip", "burst") && known
	if v, has := f["enabled"]; has {
		rl.Enabled, ok = d.Bool(v.Value, "rate_limits.enabled")
		good = good && ok
	}
	if v, has := f["per_token"]; has {
		pt, ok := d.Fields(v.Value, "rate_limits.per_token", "per_second", "per_minute")
		good = good && ok && d.require(v.Value, base, pt, "rate_limits.per_token", "per_second", "per_minute")
		if pv, has := pt["per_second"]; has {
			rl.PerTokenPerSecond, ok = d.perSecond(pv.Value, "rate_limits.per_token.per_second")
			good = good && ok
		}
		if pv, has := pt["per_minute"]; has {
			pm, ok := d.integer(pv.Value, "rate_limits.per_token.per_minute", 1, anyInt)
			rl.PerTokenPerMinute = pm
			good = good && ok
		}
	}
	if v, has := f["per_ip"]; has {
		pi, ok := d.Fields(v.Value, "rate_limits.per_ip", "per_second")
		good = good && ok && d.require(v.Value, base, pi, "rate_limits.per_ip", "per_second")
		if pv, has := pi["per_second"]; has {
			rl.PerIPPerSecond, ok = d.perSecond(pv.Value, "rate_limits.per_ip.per_second")
			good = good && ok
		}
	}
	if v, has := f["burst"]; has {
		rl.Burst, ok = d.duration(v.Value, "rate_limits.burst")
		good = good && ok
	}
	if v, has := f["per_scope"]; has {
		ps, ok := d.perScope(v.Value, rl)
		rl.PerScope = ps
		good = good && ok
	}
	return rl, good
}

// scopes are the token scopes per_scope may name, as state.ParseScope reads them.
var scopes = state.Scopes

// perScope reads rate_limits.per_scope: {deploy: {per_second, per_minute}, ...}, each
// key it leaves out taken from rl's per-token numbers.
func (d *decoder) perScope(n *yaml.Node, rl RateLimits) (map[string]ScopeRate, bool) {
	f, good := d.Fields(n, "rate_limits.per_scope", scopes...)
	if f == nil {
		return nil, false
	}
	out := map[string]ScopeRate{}
	for _, scope := range scopes {
		v, has := f[scope]
		if !has {
			continue
		}
		at := "rate_limits.per_scope." + scope
		sf, ok := d.Fields(v.Value, at, "per_second", "per_minute")
		good = good && ok
		if sf == nil {
			continue
		}
		sr := ScopeRate{PerSecond: rl.PerTokenPerSecond, PerMinute: rl.PerTokenPerMinute}
		if pv, has := sf["per_second"]; has {
			sr.PerSecond, ok = d.perSecond(pv.Value, at+".per_second")
			good = good && ok
		}
		if pv, has := sf["per_minute"]; has {
			sr.PerMinute, ok = d.integer(pv.Value, at+".per_minute", 1, anyInt)
			good = good && ok
		}
		out[scope] = sr
	}
	return out, good
}

func (d *decoder) perSecond(n *yaml.Node, where string) (float64, bool) {
	v, ok := d.Number(n, where)
	if !ok {
		return 0, false
	}
	if v <= 0 || v > maxPerSecond {
		d.Addf(n, "%s: %v is out of range: want a number more than 0 and at most %s", where, v, strconv.FormatFloat(maxPerSecond, 'f', -1, 64))
		return 0, false
	}
	return v, true
}

// require reports the keys missing from f when there is no base to take them from
// (only the built-in default is read that way).
func (d *decoder) require(n *yaml.Node, base *Scenario, f map[string]yamlcheck.Field, where string, keys ...string) bool {
	if base != nil {
		return true
	}
	good := true
	for _, k := range keys {
		if _, has := f[k]; !has {
			d.Addf(n, "%s: missing %s (the default scenario sets every key)", label(where), k)
			good = false
		}
	}
	return good
}
