package scenario

import (
	"fmt"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// deploymentRules reads deployments.rules and refuses rules an earlier rule shadows.
func (d *decoder) deploymentRules(n *yaml.Node, where string) ([]DeploymentRule, bool) {
	return readRules(d, n, where, "deployment", deploymentKind, d.deploymentWhen,
		deploymentCovers, sameDeploymentWhen,
		func(r DeploymentRule, lc []Step) DeploymentRule { r.Lifecycle = lc; return r })
}

// readRules reads a list of {when, lifecycle} rules: when reads a rule's condition,
// covers reports whether an earlier condition matches all a later one does (so the later
// rule never matches), same whether two conditions are identical, and build makes the
// rule from its condition and lifecycle.
func readRules[W, R any](d *decoder, n *yaml.Node, where, noun string, kind lifecycleKind,
	when func(*yaml.Node, string) (W, bool), covers, same func(a, b W) bool, build func(W, []Step) R) ([]R, bool) {
	items, ok := d.seq(n, where)
	if !ok {
		return nil, false
	}
	type seen struct {
		when W
		line int
	}
	var earlier []seen
	rules := make([]R, 0, len(items))
	good := true
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", where, i)
		f, ok := d.Fields(item, at, "when", "lifecycle")
		good = good && ok
		if f == nil {
			continue
		}
		wv, hasWhen := f["when"]
		lv, hasLC := f["lifecycle"]
		if !hasWhen {
			d.Addf(item, "%s: missing when (use when: {} to match every %s)", at, noun)
			good = false
		}
		if !hasLC {
			d.Addf(item, "%s: missing lifecycle", at)
			good = false
		}
		if !hasWhen || !hasLC {
			continue
		}
		w, ok := when(wv.Value, at+".when")
		lc, lcOK := d.lifecycle(lv.Value, at+".lifecycle", kind)
		if !ok || !lcOK {
			good = false
		}
		if !ok {
			continue
		}
		for _, e := range earlier {
			if covers(e.when, w) {
				d.Addf(wv.Key, "%s: this rule never matches: %s", at, shadowReason(e.line, same(e.when, w)))
				good = false
				break
			}
		}
		earlier = append(earlier, seen{w, wv.Key.Line})
		rules = append(rules, build(w, lc))
	}
	return rules, good
}

func shadowReason(line int, identical bool) string {
	if identical {
		return fmt.Sprintf("the rule at line %d has the same when", line)
	}
	return fmt.Sprintf("the rule at line %d comes first and matches everything this one does", line)
}

func (d *decoder) deploymentWhen(n *yaml.Node, at string) (DeploymentRule, bool) {
	var r DeploymentRule
	f, good := d.Fields(n, at, "project_id", "target", "env", "probability")
	if f == nil {
		return r, false
	}
	var ok bool
	if p, has, pok := d.probability(f, at); has {
		r.Probability = p
		good = good && pok
	}
	if v, has := f["project_id"]; has {
		r.ProjectID, ok = d.Word(v.Value, at+".project_id")
		good = good && ok
	}
	if v, has := f["target"]; has {
		t, ok := d.Str(v.Value, at+".target")
		if ok && t != "production" && t != "preview" {
			d.Addf(v.Value, "%s.target: %q: want production or preview%s", at, t, closestHint(t, []string{"production", "preview"}))
			ok = false
		}
		r.Target = t
		good = good && ok
	}
	if v, has := f["env"]; has {
		r.Env, ok = d.env(v.Value, at+".env")
		good = good && ok
	}
	return r, good
}

func (d *decoder) env(n *yaml.Node, at string) (map[string]string, bool) {
	n = yamlcheck.Follow(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.Addf(n, "%s: want a mapping of variable names to values, got %s", at, yamlcheck.Describe(n))
		return nil, false
	}
	env := map[string]string{}
	lines := map[string]int{}
	good := true
	for _, p := range d.Pairs(n) {
		if p.Key.Kind != yaml.ScalarNode || strings.TrimSpace(p.Key.Value) == "" {
			d.Addf(p.Key, "%s: variable names must be non-empty words", at)
			good = false
			continue
		}
		k := p.Key.Value
		if !state.ValidEnvName(k) {
			// no deployment's env holds it (the API and fixtures refuse it), so the rule
			// could never match: a typo that would let a test pass untested
			d.Addf(p.Key, "%s: %q is not a variable name (%s)", at, k, state.EnvNameRule)
			good = false
			continue
		}
		if first, dup := lines[k]; dup {
			d.Addf(p.Key, "%s: %s repeated (first at line %d)", at, k, first)
			good = false
			continue
		}
		lines[k] = p.Key.Line
		v, ok := d.Str(p.Value, at+"."+k)
		good = good && ok
		env[k] = v
	}
	if len(env) == 0 {
		env = nil
	}
	return env, good
}

// deploymentCovers reports whether every deployment b matches also matches a. A rule
// that matches only by chance covers nothing.
func deploymentCovers(a, b DeploymentRule) bool {
	if a.Probability > 0 && a.Probability < 1 {
		return false
	}
	if a.ProjectID != "" && a.ProjectID != b.ProjectID {
		return false
	}
	if a.Target != "" && a.Target != b.Target {
		return false
	}
	for k, v := range a.Env {
		if got, ok := b.Env[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func sameDeploymentWhen(a, b DeploymentRule) bool {
	return a.Probability == b.Probability && deploymentCovers(a, b) && deploymentCovers(b, a)
}

// domainRules reads domains.rules and refuses rules an earlier rule shadows.
func (d *decoder) domainRules(n *yaml.Node, where string) ([]DomainRule, bool) {
	return readRules(d, n, where, "hostname", domainKind, d.domainWhen,
		domainCovers, func(a, b domainCond) bool { return a == b },
		func(c domainCond, lc []Step) DomainRule {
			return DomainRule{Hostname: c.glob, Probability: c.probability, Lifecycle: lc}
		})
}

// domainCond is a domain rule's when: a hostname glob, and a probability (0: always).
type domainCond struct {
	glob        string
	probability float64
}

// domainCovers reports whether every hostname b matches also matches a. A rule that
// matches only by chance covers nothing.
func domainCovers(a, b domainCond) bool {
	if a.probability > 0 && a.probability < 1 {
		return false
	}
	return globCovers(a.glob, b.glob)
}

// domainWhen reads {hostname: glob}; an empty when matches every hostname and is kept
// as the glob "*", which path.Match matches against any hostname.
func (d *decoder) domainWhen(n *yaml.Node, at string) (domainCond, bool) {
	f, known := d.Fields(n, at, "hostname", "probability")
	if f == nil {
		return domainCond{}, false
	}
	var c domainCond
	p, has, pok := d.probability(f, at)
	if has {
		c.probability = p
	}
	glob, ok := d.domainGlob(f, at) // checked as well: every problem of a when is told
	c.glob = glob
	return c, ok && known && pok
}

// probability reads a when's probability (has: whether it gives one); ok is false, the
// problem told, for anything but a number more than 0 and at most 1.
func (d *decoder) probability(f map[string]yamlcheck.Field, at string) (p float64, has, ok bool) {
	v, has := f["probability"]
	if !has {
		return 0, false, true
	}
	p, ok = d.Number(v.Value, at+".probability")
	if ok && !(p > 0 && p <= 1) {
		d.Addf(v.Value, "%s.probability: %v is out of range: want a number more than 0 and at most 1", at, p)
		ok = false
	}
	return p, true, ok
}

// domainGlob reads a domain rule's hostname glob ("*" when there is none).
func (d *decoder) domainGlob(f map[string]yamlcheck.Field, at string) (string, bool) {
	v, has := f["hostname"]
	if !has {
		return "*", true
	}
	glob, ok := d.Word(v.Value, at+".hostname")
	if !ok {
		return "", false
	}
	if _, err := path.Match(glob, ""); err != nil {
		d.Addf(v.Value, "%s.hostname: %q is not a valid glob (*, ?, [a-z] and \\ escapes)", at, glob)
		return "", false
	}
	if glob != strings.ToLower(glob) {
		d.Addf(v.Value, "%s.hostname: %q: write hostnames in lower case; they are matched in lower case", at, glob)
		return "", false
	}
	if strings.Contains(glob, "/") {
		d.Addf(v.Value, "%s.hostname: %q: a hostname has no /", at, glob)
		return "", false
	}
	return glob, true
}

// globCovers reports, soundly but not completely, whether every hostname b matches
// also matches a: when b is a plain hostname that a matches, or when both use only *
// wildcards and a matches b's text (each of b's stars then falls inside one of a's).
func globCovers(a, b string) bool {
	if a == b || a == "*" {
		return true
	}
	const meta = `*?[\`
	if !strings.ContainsAny(b, meta) || (!strings.ContainsAny(a, `?[\`) && !strings.ContainsAny(b, `?[\`)) {
		ok, _ := path.Match(a, b)
		return ok
	}
	return false
}
