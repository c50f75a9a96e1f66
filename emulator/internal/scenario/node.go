package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// decoder walks a yaml.v3 node tree and records problems with their lines. Every check
// reads nodes (never yaml's reflection decoding), so every problem has a line.
type decoder struct {
	file     string
	lastLine int // problems never point past it (yaml may point just after the end)
	problems []Problem
	aliases  int  // alias dereferences so far
	bombed   bool // the alias budget ran out and was reported
}

// maxAliases bounds alias dereferences: a few anchors referring to each other can
// otherwise make a small file cost exponential work.
const maxAliases = 10000

// maxItems bounds the lists of a scenario (rules, faults); rules are checked pairwise.
const maxItems = 1000

// maxDuration bounds every duration of a scenario, so that sums of lifecycle steps and
// clock arithmetic never overflow.
const (
	maxDays     = 3650
	maxDuration = maxDays * 24 * time.Hour
)

type field struct {
	key, val *yaml.Node
}

func (d *decoder) addf(n *yaml.Node, format string, args ...any) {
	line := 1
	if n != nil {
		line = n.Line
	}
	d.addAt(line, fmt.Sprintf(format, args...))
}

func (d *decoder) addAt(line int, msg string) {
	line = max(1, line)
	if d.lastLine > 0 {
		line = min(line, d.lastLine)
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Message: msg})
}

// resolve follows aliases; nil when the alias budget is spent (already reported).
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		d.aliases++
		if d.aliases > maxAliases || hops > 100 || n.Alias == nil {
			if !d.bombed {
				d.bombed = true
				d.addf(n, "too many aliases: at most %d alias uses per file", maxAliases)
			}
			return nil
		}
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// label prefixes a message with where it is, for messages at the top level too.
func label(where string) string {
	if where == "" {
		return "the scenario"
	}
	return where
}

// fields checks that n is a mapping with string keys among allowed, each at most once,
// and returns its entries by key. Merge keys (<<: *anchor) are honoured.
func (d *decoder) fields(n *yaml.Node, where string, allowed ...string) (map[string]field, bool) {
	n = d.resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.addf(n, "%s: want a mapping with keys %s, got %s", label(where), strings.Join(allowed, ", "), kindName(n))
		return nil, false
	}
	out := make(map[string]field, len(allowed))
	ok := true
	for _, f := range d.pairs(n, 0) {
		k := f.key
		if k.Kind != yaml.ScalarNode {
			d.addf(k, "%s: keys must be plain words, got %s", label(where), kindName(k))
			ok = false
			continue
		}
		if !contains(allowed, k.Value) {
			d.addf(k, "%s: unknown key %q%s", label(where), k.Value, suggest(k.Value, allowed))
			ok = false
			continue
		}
		if prev, dup := out[k.Value]; dup {
			d.addf(k, "%s: key %q repeated (first at line %d)", label(where), k.Value, prev.key.Line)
			ok = false
			continue
		}
		out[k.Value] = f
	}
	return out, ok
}

// pairs lists a mapping's entries with merge keys expanded: explicit keys first, then
// merged ones not given explicitly (earlier merges win), as YAML's merge key says.
func (d *decoder) pairs(n *yaml.Node, depth int) []field {
	var own, merged []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, field{k, v})
			continue
		}
		if depth > 10 {
			d.addf(k, "merge keys nested too deep")
			continue
		}
		src := d.resolve(v)
		if src == nil {
			continue
		}
		switch src.Kind {
		case yaml.MappingNode:
			merged = append(merged, d.pairs(src, depth+1)...)
		case yaml.SequenceNode:
			for _, m := range src.Content {
				if m = d.resolve(m); m != nil && m.Kind == yaml.MappingNode {
					merged = append(merged, d.pairs(m, depth+1)...)
				} else if m != nil {
					d.addf(m, "<< wants a mapping or a list of mappings, got %s", kindName(m))
				}
			}
		default:
			d.addf(src, "<< wants a mapping or a list of mappings, got %s", kindName(src))
		}
	}
	if len(merged) == 0 {
		return own
	}
	seen := make(map[string]bool, len(own))
	for _, f := range own {
		seen[f.key.Value] = true
	}
	for _, f := range merged {
		if f.key.Kind == yaml.ScalarNode && !seen[f.key.Value] {
			seen[f.key.Value] = true
			own = append(own, f)
		}
	}
	return own
}

// scalar resolves n and checks it is a scalar with a value (not null).
func (d *decoder) scalar(n *yaml.Node, where, want string) (*yaml.Node, bool) {
	n = d.resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.addf(n, "%s: want %s, got %s", where, want, kindName(n))
		return nil, false
	}
	return n, true
}

// str reads any scalar as a string: `message: 404` means the text "404".
func (d *decoder) str(n *yaml.Node, where string) (string, bool) {
	s, ok := d.scalar(n, where, "a string")
	if !ok {
		return "", false
	}
	return s.Value, true
}

// word reads a string that must not be empty or blank.
func (d *decoder) word(n *yaml.Node, where string) (string, bool) {
	s, ok := d.str(n, where)
	if ok && strings.TrimSpace(s) == "" {
		d.addf(n, "%s: empty", where)
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(n *yaml.Node, where string) (bool, bool) {
	s, ok := d.scalar(n, where, "true or false")
	if !ok {
		return false, false
	}
	var b bool
	if (s.Tag != "!!bool" && s.Tag != "!!str") || s.Decode(&b) != nil {
		d.addf(s, "%s: want true or false, got %s", where, kindName(s))
		return false, false
	}
	return b, true
}

// number reads a finite number.
func (d *decoder) number(n *yaml.Node, where string) (float64, bool) {
	s, ok := d.scalar(n, where, "a number")
	if !ok {
		return 0, false
	}
	var f float64
	if (s.Tag != "!!int" && s.Tag != "!!float") || s.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.addf(s, "%s: want a number, got %s", where, kindName(s))
		return 0, false
	}
	return f, true
}

// integer reads a whole number that fits in an int32, plenty for every count here.
func (d *decoder) integer(n *yaml.Node, where string) (int, bool) {
	s, ok := d.scalar(n, where, "a whole number")
	if !ok {
		return 0, false
	}
	var i int64
	if s.Tag != "!!int" || s.Decode(&i) != nil {
		d.addf(s, "%s: want a whole number, got %s", where, kindName(s))
		return 0, false
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		d.addf(s, "%s: %d is out of range", where, i)
		return 0, false
	}
	return int(i), true
}

// duration reads a duration such as 5s, 1m30s or 90d.
func (d *decoder) duration(n *yaml.Node, where string) (time.Duration, bool) {
	s, ok := d.scalar(n, where, "a duration such as 5s or 90d")
	if !ok {
		return 0, false
	}
	v, err := parseDuration(s.Value)
	if err != nil {
		d.addf(s, "%s: %v", where, err)
		return 0, false
	}
	return v, true
}

// parseDuration is clock.ParseDuration bounded to maxDuration; it also refuses day
// counts whose nanoseconds would overflow before clock.ParseDuration could notice.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if i := strings.IndexByte(t, 'd'); i > 0 {
		if days, err := strconv.ParseUint(t[:i], 10, 64); err == nil && days > maxDays {
			return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
		}
	}
	v, err := clock.ParseDuration(s)
	if err != nil {
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return 0, fmt.Errorf("invalid duration %q: want e.g. 500ms, 5s, 2m or 90d", s)
	}
	if v < 0 || v > maxDuration {
		return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
	}
	return v, nil
}

// seq reads a list, at most maxItems long.
func (d *decoder) seq(n *yaml.Node, where string) ([]*yaml.Node, bool) {
	n = d.resolve(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		d.addf(n, "%s: want a list, got %s (use [] for none)", where, kindName(n))
		return nil, false
	}
	if len(n.Content) > maxItems {
		d.addf(n, "%s: %d items; at most %d", where, len(n.Content), maxItems)
		return nil, false
	}
	return n.Content, true
}

// fmtDuration writes whole days as "30d" and everything else as Go does.
func fmtDuration(v time.Duration) string {
	const day = 24 * time.Hour
	if v > 0 && v%day == 0 {
		return fmt.Sprintf("%dd", v/day)
	}
	return v.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest names the allowed key closest to a misspelt one, or lists them all.
func suggest(got string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if dist := editDistance(strings.ToLower(got), a); dist < bestD {
			best, bestD = a, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (want " + strings.Join(allowed, ", ") + ")"
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
