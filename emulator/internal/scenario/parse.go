package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// topKeys are a scenario file's top-level keys, in the order PRODUCT.md shows them.
var topKeys = []string{"name", "description", "deployments", "domains", "certificates", "rate_limits", "faults"}

// Parse reads and validates one scenario file. file names it in problems and becomes
// the scenario's Source; its base name, without extension, is the name when the file
// has no name: key. Sections the file leaves out are taken from the built-in default.
// It returns the scenario, or nil and every problem found, each with a line (≥ 1).
// It never panics.
func Parse(file string, data []byte) (*Scenario, []Problem) {
	return parse(file, data, defaultScenario())
}

// parse reads a scenario over base; a nil base requires every section and key (the
// built-in default is read that way, being the base of all others).
func parse(file string, data []byte, base *Scenario) (s *Scenario, problems []Problem) {
	defer func() {
		if v := recover(); v != nil {
			s, problems = nil, []Problem{{File: file, Line: 1, Message: fmt.Sprintf("internal error reading the scenario: %v", v)}}
		}
	}()
	d := &decoder{file: file, lastLine: lastLine(data)}
	root := d.document(data)
	if root != nil {
		s = d.scenario(root, file, base)
	}
	if len(d.problems) > 0 || s == nil {
		if len(d.problems) == 0 { // cannot happen; keeps the contract if it does
			d.addf(nil, "not a scenario")
		}
		sortProblems(d.problems)
		return nil, d.problems
	}
	return s, nil
}

// document parses the YAML text and returns its root node, a mapping.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.addf(nil, "empty file: a scenario is a mapping with keys %s", strings.Join(topKeys, ", "))
		} else {
			d.syntaxError(err, data)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		at := &extra
		if len(extra.Content) > 0 {
			at = extra.Content[0]
		}
		d.addf(at, "a second YAML document: a scenario file holds exactly one")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(err, data)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.addf(&doc, "empty file: a scenario is a mapping with keys %s", strings.Join(topKeys, ", "))
		return nil
	}
	root := d.resolve(doc.Content[0])
	if root == nil {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.addf(root, "a scenario is a mapping with keys %s, got %s", strings.Join(topKeys, ", "), kindName(root))
		return nil
	}
	return root
}

var (
	lineRE   = regexp.MustCompile(`\bline (\d+)\b`)
	offsetRE = regexp.MustCompile(`\boffset (\d+)\b`)
	anchorRE = regexp.MustCompile(`unknown anchor '(.*)' referenced`)
	// parserProblemRE matches the problems of yaml.v3's parser (not its scanner), whose
	// "line N" counts from 0: the line of the construct that is not closed.
	parserProblemRE = regexp.MustCompile(`^yaml: (line \d+: )?(did not find expected|found duplicate %|found incompatible YAML|found undefined tag)`)
)

// syntaxError records a YAML syntax error at the line yaml names, else the line of the
// byte offset or the anchor it names, else line 1; never past the file's last line.
func (d *decoder) syntaxError(err error, data []byte) {
	msg := err.Error()
	line := 1
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		if parserProblemRE.MatchString(msg) {
			line++
		}
	} else if m := offsetRE.FindStringSubmatch(msg); m != nil {
		if off, err := strconv.Atoi(m[1]); err == nil && off >= 0 {
			line = lineAt(data, off)
		}
	} else if m := anchorRE.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = lineAt(data, i)
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = lineRE.ReplaceAllString(msg, "")
	msg = strings.TrimLeft(msg, ": ")
	d.addAt(line, "invalid YAML: "+msg)
}

// lastLine is the number of the file's last line, not counting an empty one after a
// final newline.
func lastLine(data []byte) int {
	return max(1, bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))+1)
}

func lineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// scenario reads the top-level mapping, section by section over base.
func (d *decoder) scenario(root *yaml.Node, file string, base *Scenario) *Scenario {
	f, ok := d.fields(root, "", topKeys...)
	if !ok && f == nil {
		return nil
	}
	s := &Scenario{Source: file, nameLine: 1}
	if base != nil {
		s.Uploads = base.Uploads
		s.DeploymentLifecycle = cloneSteps(base.DeploymentLifecycle)
		s.DeploymentRules = cloneDeploymentRules(base.DeploymentRules)
		s.DomainLifecycle = cloneSteps(base.DomainLifecycle)
		s.DomainRules = cloneDomainRules(base.DomainRules)
		s.Certificates = base.Certificates
		s.RateLimits = base.RateLimits
		s.Faults = cloneFaults(base.Faults)
	}
	d.require(root, base, f, "", "name", "description", "deployments", "domains", "certificates", "rate_limits", "faults")
	if v, has := f["name"]; has {
		s.nameLine = v.key.Line
		if name, ok := d.str(v.val, "name"); ok && d.checkName(v.val, name) {
			s.Name = name
		}
	} else {
		if file != "" {
			s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		}
		if s.Name == "" || s.Name == "." {
			d.addf(root, "missing name, and the file name gives none")
		} else {
			d.checkName(root, s.Name)
		}
	}
	if v, has := f["description"]; has {
		s.Description, _ = d.str(v.val, "description")
	}
	if v, has := f["deployments"]; has {
		d.deployments(v.val, s, base)
	}
	if v, has := f["domains"]; has {
		d.domains(v.val, s, base)
	}
	if v, has := f["certificates"]; has {
		s.Certificates, _ = d.certificates(v.val, base)
	}
	if v, has := f["rate_limits"]; has {
		s.RateLimits, _ = d.rateLimits(v.val, base)
	}
	if v, has := f["faults"]; has {
		s.Faults, _ = d.faults(v.val)
	}
	return s
}

// checkName refuses names that cannot be typed in a PUT /_emulator/scenarios/active.
func (d *decoder) checkName(n *yaml.Node, name string) bool {
	switch {
	case strings.TrimSpace(name) == "":
		d.addf(n, "name: empty")
	case strings.TrimSpace(name) != name:
		d.addf(n, "name: %q has leading or trailing spaces", name)
	case len(name) > 100:
		d.addf(n, "name: longer than 100 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		d.addf(n, "name: %q has control characters", name)
	default:
		return true
	}
	return false
}

func (d *decoder) deployments(n *yaml.Node, s, base *Scenario) {
	f, ok := d.fields(n, "deployments", "uploads", "lifecycle", "rules")
	if !ok && f == nil {
		return
	}
	d.require(n, base, f, "deployments", "uploads", "lifecycle", "rules")
	if v, has := f["uploads"]; has {
		if u, ok := d.str(v.val, "deployments.uploads"); ok {
			if u != UploadsLenient && u != UploadsStrict {
				d.addf(v.val, "deployments.uploads: %q: want %s or %s", u, UploadsLenient, UploadsStrict)
			}
			s.Uploads = u
		}
	}
	if v, has := f["lifecycle"]; has {
		s.DeploymentLifecycle, _ = d.lifecycle(v.val, "deployments.lifecycle", deploymentKind)
	}
	if v, has := f["rules"]; has {
		s.DeploymentRules, _ = d.deploymentRules(v.val, "deployments.rules")
	}
}

func (d *decoder) domains(n *yaml.Node, s, base *Scenario) {
	f, ok := d.fields(n, "domains", "lifecycle", "rules")
	if !ok && f == nil {
		return
	}
	d.require(n, base, f, "domains", "lifecycle", "rules")
	if v, has := f["lifecycle"]; has {
		s.DomainLifecycle, _ = d.lifecycle(v.val, "domains.lifecycle", domainKind)
	}
	if v, has := f["rules"]; has {
		s.DomainRules, _ = d.domainRules(v.val, "domains.rules")
	}
}
