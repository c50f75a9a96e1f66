package scenario

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// TopKeys are a scenario file's top-level keys, in the order docs/scenarios.md shows them
// (fixture.Classify tells files apart by them).
func TopKeys() []string { return slices.Clone(topKeys) }

var topKeys = []string{"name", "description", "deployments", "domains", "certificates", "rate_limits", "faults"}

// Parse reads and validates one scenario file. file names it in problems and becomes
// the scenario's Source; its base name, without extension, is the name when the file
// has no name: key. Sections the file leaves out are taken from the built-in default.
// It returns the scenario, or nil and every problem found, each with a line (≥ 1).
// It never panics: a broken built-in default (a bug in hostemu) is a problem of file,
// which cannot be checked without it.
func Parse(file string, data []byte) (*Scenario, []Problem) {
	return embeddedBuiltins().parseDoc(file, data)
}

// parse reads a scenario over base; a nil base requires every section and key (the
// built-in default is read that way, being the base of all others).
func parse(file string, data []byte, base *Scenario) (*Scenario, []Problem) {
	s, _, problems := parseNamed(file, data, base)
	return s, problems
}

// parseNamed is parse, also saying the name the scenario claims (its name:, or the
// file's name without one) even when it fails, so far as that much was read: a file
// that never parsed still claims its scenario (Registry.Broken).
func parseNamed(file string, data []byte, base *Scenario) (s *Scenario, name string, problems []Problem) {
	defer func() {
		if v := recover(); v != nil {
			s, name, problems = nil, "", []Problem{{File: file, Line: 1, Message: fmt.Sprintf("internal error reading the scenario: %v", v)}}
		}
	}()
	d := &decoder{yamlcheck.New(file, data)}
	root, ok := d.Document(data, "scenario", topKeys)
	if ok && root == nil {
		d.Addf(nil, "empty file: a scenario is a mapping with keys %s", strings.Join(topKeys, ", "))
	}
	if root != nil {
		s = d.scenario(root, file, base)
	}
	if s != nil {
		name = s.Name
	}
	if d.Failed() || s == nil {
		if !d.Failed() { // cannot happen; keeps the contract if it does
			d.Addf(nil, "not a scenario")
		}
		return nil, name, d.Problems()
	}
	s.Raw = data
	return s, name, nil
}

// scenario reads the top-level mapping, section by section over base.
func (d *decoder) scenario(root *yaml.Node, file string, base *Scenario) *Scenario {
	f, ok := d.Fields(root, "", topKeys...)
	if !ok && f == nil {
		return nil
	}
	s := &Scenario{}
	if base != nil {
		s = base.clone() // every section; the name and description are the file's own
		s.Name, s.Description = "", ""
	}
	s.Source, s.nameLine = file, 1
	d.require(root, base, f, "", "name", "description", "deployments", "domains", "certificates", "rate_limits", "faults")
	if v, has := f["name"]; has {
		s.nameLine = v.Key.Line
		if name, ok := d.Str(v.Value, "name"); ok && d.checkName(v.Value, name) {
			s.Name = name
		}
	} else {
		if file != "" {
			s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		}
		if s.Name == "" || s.Name == "." {
			d.Addf(root, "missing name, and the file name gives none")
		} else {
			d.checkName(root, s.Name)
		}
	}
	if v, has := f["description"]; has {
		s.Description, _ = d.Str(v.Value, "description")
	}
	if v, has := f["deployments"]; has {
		d.deployments(v.Value, s, base)
	}
	if v, has := f["domains"]; has {
		d.domains(v.Value, s, base)
	}
	if v, has := f["certificates"]; has {
		s.Certificates, _ = d.certificates(v.Value, base)
	}
	if v, has := f["rate_limits"]; has {
		s.RateLimits, _ = d.rateLimits(v.Value, base)
	}
	if v, has := f["faults"]; has {
		s.Faults, _ = d.faults(v.Value)
	}
	return s
}

// checkName refuses names that cannot be typed in a PUT /_emulator/scenarios/active.
func (d *decoder) checkName(n *yaml.Node, name string) bool {
	switch {
	case strings.TrimSpace(name) == "":
		d.Addf(n, "name: empty")
	case strings.TrimSpace(name) != name:
		d.Addf(n, "name: %q has leading or trailing spaces", name)
	case len(name) > 100:
		d.Addf(n, "name: longer than 100 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		d.Addf(n, "name: %q has control characters", name)
	default:
		return true
	}
	return false
}

func (d *decoder) deployments(n *yaml.Node, s, base *Scenario) {
	f, ok := d.Fields(n, "deployments", "uploads", "lifecycle", "rules")
	if !ok && f == nil {
		return
	}
	d.require(n, base, f, "deployments", "uploads", "lifecycle", "rules")
	if v, has := f["uploads"]; has {
		if u, ok := d.Str(v.Value, "deployments.uploads"); ok {
			if u != UploadsLenient && u != UploadsStrict {
				d.Addf(v.Value, "deployments.uploads: %q: want %s or %s%s", u, UploadsLenient, UploadsStrict, closestHint(u, []string{UploadsLenient, UploadsStrict}))
			}
			s.Uploads = u
		}
	}
	if v, has := f["lifecycle"]; has {
		s.DeploymentLifecycle, _ = d.lifecycle(v.Value, "deployments.lifecycle", deploymentKind)
	}
	if v, has := f["rules"]; has {
		s.DeploymentRules, _ = d.deploymentRules(v.Value, "deployments.rules")
	}
}

func (d *decoder) domains(n *yaml.Node, s, base *Scenario) {
	f, ok := d.Fields(n, "domains", "lifecycle", "rules")
	if !ok && f == nil {
		return
	}
	d.require(n, base, f, "domains", "lifecycle", "rules")
	if v, has := f["lifecycle"]; has {
		s.DomainLifecycle, _ = d.lifecycle(v.Value, "domains.lifecycle", domainKind)
	}
	if v, has := f["rules"]; has {
		s.DomainRules, _ = d.domainRules(v.Value, "domains.rules")
	}
}
