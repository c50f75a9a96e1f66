package yamlcheck

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Field is one entry of a mapping.
type Field struct {
	Key, Value *yaml.Node
}

// Follow follows aliases; nil for a nil node or an alias that leads nowhere.
func Follow(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is the null scalar (an empty value, ~ or null).
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// Describe names what n is, for "want …, got …": a mapping, a list, nothing, a boolean,
// a number or the quoted text.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("%q", Excerpt(n.Value))
	}
	return "something else"
}

// label names where a problem is; the top level of the file has no name.
func label(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// Entries checks that n is a mapping whose keys are plain words among allowed, each at
// most once, and returns its entries in document order, merge keys (<<: *anchor)
// expanded as YAML says (explicit keys win, then earlier merges). An allowed entry
// ending in "*" admits every key with that prefix ("x-*"). ok is false when n is not a
// mapping or a key is wrong; the good entries are returned either way.
func (c *Checker) Entries(n *yaml.Node, where string, allowed ...string) (entries []Field, ok bool) {
	n = Follow(n)
	if n == nil {
		return nil, false
	}
	if IsNull(n) { // the one rule for an empty key: see EmptyKey
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		c.Addf(n, "%swant a mapping with keys %s, got %s", label(where), strings.Join(allowed, ", "), Describe(n))
		return nil, false
	}
	ok = true
	first := map[string]int{}
	for _, f := range c.pairs(n, 0) {
		k := Follow(f.Key)
		if k == nil || k.Kind != yaml.ScalarNode {
			at := f.Key
			if k != nil {
				at = k
			}
			c.Addf(at, "%skeys must be plain words, got %s", label(where), describeOrNothing(k))
			ok = false
			continue
		}
		if !allowedKey(k.Value, allowed) {
			c.Addf(k, "%sunknown key %q%s", label(where), k.Value, Suggest(k.Value, allowed))
			ok = false
			continue
		}
		if line, dup := first[k.Value]; dup {
			c.Addf(k, "%skey %q repeated (first at line %d)", label(where), k.Value, line)
			ok = false
			continue
		}
		first[k.Value] = k.Line
		entries = append(entries, Field{Key: k, Value: f.Value})
	}
	return entries, ok
}

func describeOrNothing(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return Describe(n)
}

// Fields is Entries by key.
func (c *Checker) Fields(n *yaml.Node, where string, allowed ...string) (map[string]Field, bool) {
	entries, ok := c.Entries(n, where, allowed...)
	if entries == nil && !ok {
		return nil, false
	}
	out := make(map[string]Field, len(entries))
	for _, f := range entries {
		out[f.Key.Value] = f
	}
	return out, ok
}

// allowedKey reports whether key is among allowed, where "x-*" stands for every key with
// the prefix "x-".
func allowedKey(key string, allowed []string) bool {
	for _, a := range allowed {
		if a == key || (strings.HasSuffix(a, "*") && strings.HasPrefix(key, a[:len(a)-1])) {
			return true
		}
	}
	return false
}

// Pairs lists the entries of the mapping n with merge keys expanded, without checking
// its keys (for mappings whose keys are data, such as env).
func (c *Checker) Pairs(n *yaml.Node) []Field { return c.pairs(n, 0) }

// pairs lists a mapping's entries with merge keys expanded: explicit keys first, then
// merged ones not given explicitly (earlier merges win), as YAML's merge key says.
func (c *Checker) pairs(n *yaml.Node, depth int) []Field {
	var own, merged []Field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
			own = append(own, Field{k, v})
			continue
		}
		if depth > 10 {
			c.Addf(k, "merge keys nested too deep")
			continue
		}
		src := Follow(v)
		if src == nil {
			continue
		}
		switch src.Kind {
		case yaml.MappingNode:
			merged = append(merged, c.pairs(src, depth+1)...)
		case yaml.SequenceNode:
			for _, m := range src.Content {
				if m = Follow(m); m != nil && m.Kind == yaml.MappingNode {
					merged = append(merged, c.pairs(m, depth+1)...)
				} else if m != nil {
					c.Addf(m, "<< wants a mapping or a list of mappings, got %s", Describe(m))
				}
			}
		default:
			c.Addf(src, "<< wants a mapping or a list of mappings, got %s", Describe(src))
		}
	}
	if len(merged) == 0 {
		return own
	}
	seen := make(map[string]bool, len(own))
	for _, f := range own {
		seen[f.Key.Value] = true
	}
	for _, f := range merged {
		if f.Key.Kind == yaml.ScalarNode && !seen[f.Key.Value] {
			seen[f.Key.Value] = true
			own = append(own, f)
		}
	}
	return own
}

// EmptyKey is the one rule for a key written with no value (null, ~) in scenario and
// fixture files alike: where a list or a mapping is wanted it is the empty one (Seq,
// Entries, Fields); where a scalar is wanted it is a problem (Scalar), as a scalar has
// no empty value to stand for.
const EmptyKey = "a key with no value is an empty list or mapping, and no scalar"

// Seq checks that n is a list and returns its items; null is the empty list (EmptyKey).
func (c *Checker) Seq(n *yaml.Node, where string) ([]*yaml.Node, bool) {
	n = Follow(n)
	if n == nil {
		return nil, false
	}
	if IsNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		c.Addf(n, "%swant a list, got %s", label(where), Describe(n))
		return nil, false
	}
	return n.Content, true
}

// Scalar checks that n is a scalar with a value (not null); want names what is wanted.
func (c *Checker) Scalar(n *yaml.Node, where, want string) (*yaml.Node, bool) {
	n = Follow(n)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.ScalarNode || IsNull(n) {
		c.Addf(n, "%swant %s, got %s", label(where), want, Describe(n))
		return nil, false
	}
	return n, true
}

// Str reads any scalar as a string: `message: 404` means the text "404".
func (c *Checker) Str(n *yaml.Node, where string) (string, bool) {
	s, ok := c.Scalar(n, where, "a string")
	if !ok {
		return "", false
	}
	return s.Value, true
}

// Word reads a string that must not be empty or blank.
func (c *Checker) Word(n *yaml.Node, where string) (string, bool) {
	s, ok := c.Str(n, where)
	if ok && strings.TrimSpace(s) == "" {
		c.Addf(Follow(n), "%sempty", label(where))
		return "", false
	}
	return s, ok
}

// Bool reads true or false.
func (c *Checker) Bool(n *yaml.Node, where string) (bool, bool) {
	s, ok := c.Scalar(n, where, "true or false")
	if !ok {
		return false, false
	}
	var b bool
	if (s.ShortTag() != "!!bool" && s.ShortTag() != "!!str") || s.Decode(&b) != nil {
		c.Addf(s, "%swant true or false, got %s", label(where), Describe(s))
		return false, false
	}
	return b, true
}

// Number reads a finite number.
func (c *Checker) Number(n *yaml.Node, where string) (float64, bool) {
	s, ok := c.Scalar(n, where, "a number")
	if !ok {
		return 0, false
	}
	var f float64
	numeric := s.ShortTag() == "!!int" || s.ShortTag() == "!!float"
	if numeric && s.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, true
	}
	// Name what was written: "got a number" would not say why .nan or 1e400 (which
	// YAML reads as a string, being past float64) is no number here.
	if _, err := strconv.ParseFloat(s.Value, 64); errors.Is(err, strconv.ErrRange) {
		c.Addf(s, "%s%s is out of range: want a number", label(where), Excerpt(s.Value))
	} else if numeric {
		c.Addf(s, "%swant a number, got %s, which is not finite", label(where), Excerpt(s.Value))
	} else {
		c.Addf(s, "%swant a number, got %s", label(where), Describe(s))
	}
	return 0, false
}

// Integer reads a whole number from lo to hi, and names that range when it is not.
func (c *Checker) Integer(n *yaml.Node, where string, lo, hi int64) (int64, bool) {
	s, ok := c.Scalar(n, where, "a whole number")
	if !ok {
		return 0, false
	}
	var i int64
	if s.ShortTag() != "!!int" || s.Decode(&i) != nil {
		var f float64
		// Beyond int64, yaml.v3 reads a whole number as a float (or fails on it).
		if s.ShortTag() == "!!int" || s.Decode(&f) == nil && f == math.Trunc(f) && (f < float64(lo) || f > float64(hi)) {
			c.Addf(s, "%s%s is out of range: want a whole number %s", label(where), Excerpt(s.Value), rangeOf(float64(lo), float64(hi)))
		} else {
			c.Addf(s, "%swant a whole number, got %s", label(where), Describe(s))
		}
		return 0, false
	}
	if i < lo || i > hi {
		c.Addf(s, "%s%d is out of range: want a whole number %s", label(where), i, rangeOf(float64(lo), float64(hi)))
		return 0, false
	}
	return i, true
}

// rangeOf words the allowed range from lo to hi, both included: "from 1 to 1000000000",
// written out in full so that a reader need not decode 1e+09.
func rangeOf(lo, hi float64) string {
	return "from " + strconv.FormatFloat(lo, 'f', -1, 64) + " to " + strconv.FormatFloat(hi, 'f', -1, 64)
}

// Suggest names the allowed value closest to a misspelt one, or lists them all: " (did
// you mean \"x\"?)" or " (want a, b, c)". The YAML checker and the control API's strict
// input both say it; case does not count.
func Suggest(got string, allowed []string) string {
	var keys []string
	for _, a := range allowed {
		if !strings.HasSuffix(a, "*") {
			keys = append(keys, a)
		}
	}
	if best := closestFold(got, keys); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (want " + strings.Join(allowed, ", ") + ")"
}

// DidYouMean is Suggest without the list: " (did you mean \"x\"?)" for the known value
// closest to got, else "": for messages that already say what they want.
func DidYouMean(got string, known []string) string {
	if best := Closest(got, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// closestFold is Closest ignoring case (HTTP methods are upper case, keys lower).
func closestFold(got string, known []string) string {
	lower := make([]string, len(known))
	for i, k := range known {
		lower[i] = strings.ToLower(k)
	}
	if best := Closest(strings.ToLower(got), lower); best != "" {
		return known[slices.Index(lower, best)]
	}
	return ""
}

// Closest is the known value nearest got, within an edit distance of 2 (the first of
// equals), or "" when none is that near: the one rule behind every "did you mean", for
// keys, enum values and scenario names alike.
func Closest(got string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := EditDistance(got, k); dist < bestD {
			best, bestD = k, dist
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b (64 for strings longer than
// that: nothing so long is a near miss), for "did you mean" suggestions.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	return levenshtein(a, b)
}

// Nearest is the known value nearest got whatever the distance ("" when known is
// empty), for names worth giving even when they differ by more than a typo (a route
// template, an operation). Its cost is len(got) × len(k) per known value: the caller
// bounds got.
func Nearest(got string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if d := levenshtein(got, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// levenshtein is Levenshtein's distance between a and b.
func levenshtein(a, b string) int {
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
