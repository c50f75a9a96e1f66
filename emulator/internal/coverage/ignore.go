package coverage

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// ConfigFile is the coverage file hostemu coverage reads from the working directory
// when --config does not name another.
const ConfigFile = ".hostemu-coverage.yaml"

// maxConfigBytes bounds a coverage file: a list of rules, never near it.
const maxConfigBytes = 1 << 20

// Rule marks rows of coverage as not applicable to the client under test, with why:
// they are listed as ignored and left out of the totals, so of the minimums.
//
//   - Code alone: every documented answer carrying that error code, of every operation.
//   - Operation alone ("POST /v1/files"): the operation, every answer of it included.
//   - Code and Operation: that code's answers of that operation only.
//   - Transition ("certificate issued → error (renewal)", "->" for "→"): one lifecycle
//     edge, as hostemu coverage names it.
type Rule struct {
	Code       string `json:"code,omitempty"`
	Operation  string `json:"operation,omitempty"`
	Transition string `json:"transition,omitempty"`
	Reason     string `json:"reason"`
}

// Ignore is a list of rules: a coverage file's ignore list, --ignore's or ?ignore='s.
// Its zero value ignores nothing.
type Ignore struct {
	Rules []Rule
}

// names are what rules may name: the error codes of the catalogue, and the model's
// operations and transitions as reports word them.
type names struct {
	codes, ops, trans []string
}

func namesOf(m *Model) names {
	var n names
	for _, d := range apperr.Catalogue() {
		n.codes = append(n.codes, string(d.Code))
	}
	for _, o := range m.Operations {
		n.ops = append(n.ops, o.Method+" "+o.Path)
	}
	for _, t := range m.Transitions {
		n.trans = append(n.trans, TransitionName(t.Resource, t.From, t.To, t.Via))
	}
	return n
}

// TransitionName is a lifecycle edge as the outputs (and rules) name it:
// "deployment ready → production (rollback)".
func TransitionName(resource, from, to, via string) string {
	s := resource + " " + from + " → " + to
	if via != "" {
		s += " (" + via + ")"
	}
	return s
}

// normalTransition reads a rule's transition as TransitionName writes it: "->" for
// "→", spaces as they come.
func normalTransition(s string) string {
	s = strings.ReplaceAll(s, "->", "→")
	s = strings.ReplaceAll(s, "→", " → ")
	return strings.Join(strings.Fields(s), " ")
}

// normalOperation reads "post  /v1/files" as "POST /v1/files".
func normalOperation(s string) string {
	f := strings.Fields(s)
	if len(f) != 2 {
		return strings.Join(f, " ")
	}
	return strings.ToUpper(f[0]) + " " + f[1]
}

// ParseList reads a comma-separated list of names (--ignore's, ?ignore='s): each an
// error code, an operation or a transition, ignored for reason. A name none of them is
// an error naming the closest.
func ParseList(list, reason string) (Ignore, error) {
	n := namesOf(Default())
	var ig Ignore
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case slices.Contains(n.codes, item):
			ig.Rules = append(ig.Rules, Rule{Code: item, Reason: reason})
		case slices.Contains(n.ops, normalOperation(item)):
			ig.Rules = append(ig.Rules, Rule{Operation: normalOperation(item), Reason: reason})
		case slices.Contains(n.trans, normalTransition(item)):
			ig.Rules = append(ig.Rules, Rule{Transition: normalTransition(item), Reason: reason})
		default:
			// codes are lower case: one in another case (INTERNAL_ERROR) is the one meant,
			// as the journal's ?code= takes any case
			hint := yamlcheck.DidYouMean(strings.ToLower(item), n.codes)
			if hint == "" {
				hint = yamlcheck.DidYouMean(normalOperation(item), n.ops)
			}
			if hint == "" {
				hint = yamlcheck.DidYouMean(normalTransition(item), n.trans)
			}
			return Ignore{}, fmt.Errorf("%q is not an error code, an operation (\"POST /v1/files\") or a lifecycle edge (\"deployment building → error\")%s", item, hint)
		}
	}
	return ig, nil
}

// ReadConfig reads a coverage file. An empty path is ConfigFile in the working
// directory, which may be absent (nothing is ignored then); a path given must exist.
// Problems are a problem.List: file:line:column, the unknown key or name and the
// closest known one.
func ReadConfig(path string) (Ignore, error) {
	optional := path == ""
	if optional {
		path = ConfigFile
	}
	data, err := yamlcheck.ReadFile(path, maxConfigBytes)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return Ignore{}, nil
		}
		return Ignore{}, problem.List{{File: path, Message: err.Error()}}
	}
	return ParseConfig(path, data)
}

// ParseConfig reads a coverage file's contents, file naming it in problems:
//
//	ignore:
//	  - code: internal_error
//	    reason: our client shows every 500 alike
//	  - operation: POST /v1/files
//	    reason: we never upload
func ParseConfig(file string, data []byte) (Ignore, error) {
	c := yamlcheck.New(file, data)
	root, ok := c.Document(data, "coverage file", []string{"ignore"})
	var ig Ignore
	if ok && root != nil {
		ig = parseRoot(c, root, namesOf(Default()))
	}
	if c.Failed() {
		return Ignore{}, problem.List(c.Problems())
	}
	return ig, nil
}

func parseRoot(c *yamlcheck.Checker, root *yaml.Node, n names) Ignore {
	var ig Ignore
	fields, _ := c.Fields(root, "", "ignore")
	f, ok := fields["ignore"]
	if !ok {
		return ig
	}
	items, _ := c.Seq(f.Value, "ignore")
	for i, item := range items {
		where := fmt.Sprintf("ignore[%d]", i)
		rf, ok := c.Fields(item, where, "code", "operation", "transition", "reason")
		if !ok {
			continue
		}
		var r Rule
		bad := false
		word := func(key string) string {
			f, ok := rf[key]
			if !ok {
				return ""
			}
			s, ok := c.Word(f.Value, where+"."+key)
			if !ok {
				bad = true
			}
			return strings.TrimSpace(s)
		}
		r.Code, r.Operation, r.Transition, r.Reason = word("code"), word("operation"), word("transition"), word("reason")
		if bad {
			continue
		}
		switch {
		case r.Reason == "":
			c.Addf(item, "%s: no reason: say why these rows do not apply to your client (reason: …)", where)
			continue
		case r.Code == "" && r.Operation == "" && r.Transition == "":
			c.Addf(item, "%s: names nothing to ignore: give code, operation (and code), or transition", where)
			continue
		case r.Transition != "" && (r.Code != "" || r.Operation != ""):
			c.Addf(rf["transition"].Key, "%s: a transition is ignored alone, without code or operation", where)
			continue
		}
		if r.Code != "" && !slices.Contains(n.codes, r.Code) {
			c.Addf(rf["code"].Value, "%s.code: %q is not an error code%s", where, r.Code, yamlcheck.Suggest(r.Code, n.codes))
			bad = true
		}
		if r.Operation != "" {
			if op := normalOperation(r.Operation); slices.Contains(n.ops, op) {
				r.Operation = op
			} else {
				c.Addf(rf["operation"].Value, "%s.operation: %q is not an operation%s", where, r.Operation, yamlcheck.Suggest(op, n.ops))
				bad = true
			}
		}
		if r.Transition != "" {
			if t := normalTransition(r.Transition); slices.Contains(n.trans, t) {
				r.Transition = t
			} else {
				c.Addf(rf["transition"].Value, "%s.transition: %q is not a lifecycle edge%s", where, r.Transition, yamlcheck.Suggest(t, n.trans))
				bad = true
			}
		}
		if !bad {
			ig.Rules = append(ig.Rules, r)
		}
	}
	return ig
}

// Add is ig's rules and o's together.
func (ig Ignore) Add(o Ignore) Ignore {
	return Ignore{Rules: append(append([]Rule(nil), ig.Rules...), o.Rules...)}
}

// Apply marks the rows of r the rules name as ignored (the first rule's reason) and
// computes the totals without them; r's lists are copied, not changed.
func (ig Ignore) Apply(r Report) Report {
	if len(ig.Rules) == 0 {
		return r
	}
	out := r
	out.Operations = make([]OperationReport, len(r.Operations))
	for i, o := range r.Operations {
		name := o.Method + " " + o.Path
		o.Responses = append([]ResponseReport(nil), o.Responses...)
		for _, rule := range ig.Rules {
			if o.Ignored == "" && rule.Operation == name && rule.Code == "" {
				o.Ignored = rule.Reason
			}
		}
		for j := range o.Responses {
			a := &o.Responses[j]
			if a.Undocumented || a.Ignored != "" {
				continue
			}
			if o.Ignored != "" {
				a.Ignored = o.Ignored
				continue
			}
			for _, rule := range ig.Rules {
				if rule.Code != "" && rule.Code == codeOf(a.Code) && (rule.Operation == "" || rule.Operation == name) {
					a.Ignored = rule.Reason
					break
				}
			}
		}
		out.Operations[i] = o
	}
	out.Transitions = append([]TransitionReport(nil), r.Transitions...)
	for i := range out.Transitions {
		t := &out.Transitions[i]
		name := TransitionName(t.Resource, t.From, t.To, t.Via)
		for _, rule := range ig.Rules {
			if t.Ignored == "" && rule.Transition == name {
				t.Ignored = rule.Reason
			}
		}
	}
	out.Totals = totalsOf(out)
	return out
}
