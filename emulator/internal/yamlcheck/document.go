package yamlcheck

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Document parses data, which must hold one YAML document whose root, when there is
// one, is a mapping: a kind ("scenario", "fixture") with the top-level keys keys. It
// returns the root, or nil with ok when the file holds no document or only null (the
// caller decides whether that is a problem), or nil and !ok after recording why.
// Aliases may expand the document to at most 4 nodes per byte of data, plus 1000.
func (c *Checker) Document(data []byte, kind string, keys []string) (root *yaml.Node, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		c.syntaxError(err, data)
		return nil, false
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		at := &extra // the line of its "---", where it begins
		if extra.Line == 0 && len(extra.Content) > 0 {
			at = extra.Content[0]
		}
		c.Addf(at, "a second YAML document: a %s file holds exactly one", kind)
		return nil, false
	case !errors.Is(err, io.EOF):
		c.syntaxError(err, data)
		return nil, false
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	if !c.expansionFits(doc.Content[0], maxNodes(len(data))) {
		return nil, false
	}
	root = Follow(doc.Content[0])
	switch {
	case root == nil || IsNull(root):
		return nil, true
	case root.Kind != yaml.MappingNode:
		c.Addf(root, "a %s is a mapping with keys %s, got %s", kind, strings.Join(keys, ", "), Describe(root))
		return nil, false
	}
	return root, true
}

// maxNodes is how many nodes a file of size bytes may expand to through its aliases:
// four per byte and a thousand more. A file without aliases has fewer nodes than bytes;
// one that reuses anchors in earnest stays far below; a billion laughs does not.
func maxNodes(size int) int { return 4*size + 1000 }

// MaxDepth bounds how deeply a file's mappings and sequences nest (aliases followed):
// a scenario or fixture nests a handful of levels; yaml.v3 nests deeper only for
// hostile input.
const MaxDepth = 1000

// expansionFits counts the nodes of n with every alias expanded (each anchor counted
// once, so the count costs one pass however deep the aliases nest) and records a
// problem at the alias where the count passes limit, or at the first node nested
// deeper than MaxDepth.
func (c *Checker) expansionFits(n *yaml.Node, limit int) bool {
	sizes := map[*yaml.Node]int{}
	var deep *yaml.Node // the first node found past MaxDepth
	var size func(n *yaml.Node, depth int) int
	size = func(n *yaml.Node, depth int) int {
		if n == nil {
			return 0
		}
		if s, done := sizes[n]; done {
			return s
		}
		if depth > MaxDepth {
			if deep == nil {
				deep = n
			}
			return limit + 1
		}
		total := 1
		if n.Kind == yaml.AliasNode {
			sizes[n] = limit + 1 // an alias inside its own anchor never ends
			total += size(n.Alias, depth+1)
		}
		for _, child := range n.Content {
			total = min(total+size(child, depth+1), limit+1)
		}
		sizes[n] = min(total, limit+1)
		return sizes[n]
	}
	if size(n, 0) <= limit {
		return true
	}
	if deep != nil { // not an alias's fault: say what is wrong
		c.Addf(deep, "the file nests mappings and sequences deeper than %d levels", MaxDepth)
		return false
	}
	c.Addf(firstAliasOver(n, sizes, limit), "too many aliases: they expand this file past %d nodes (4 per byte of the file, plus 1000)", limit)
	return false
}

// firstAliasOver finds, in document order, the first alias whose expansion alone is
// too large, else the root: the place to look at.
func firstAliasOver(root *yaml.Node, sizes map[*yaml.Node]int, limit int) *yaml.Node {
	var found *yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || found != nil {
			return
		}
		if n.Kind == yaml.AliasNode {
			if sizes[n] > limit/2 {
				found = n
			}
			return
		}
		for _, child := range n.Content {
			walk(child)
		}
	}
	walk(root)
	if found == nil {
		return root
	}
	return found
}

var (
	lineRE   = regexp.MustCompile(`\bline (\d+)\b`)
	offsetRE = regexp.MustCompile(`\boffset (\d+)\b`)
	anchorRE = regexp.MustCompile(`unknown anchor '(.*)' referenced`)
	quotedRE = regexp.MustCompile(`'[^']*'`)
	// parserProblemRE matches the problems of yaml.v3's parser (not its scanner). yaml.v3
	// adds 1 to its 0-based line for scanner errors only, so a parser error's "line N"
	// is the line before the one the user sees: the line of a construct left open, or
	// of the offending token when the construct starts on line 1.
	parserProblemRE = regexp.MustCompile(`^yaml: (line \d+: )?(did not find expected|found duplicate %|found incompatible YAML|found undefined tag)`)
)

// syntaxError records a YAML syntax error at the line yaml names (counted from 1), else
// the line of the byte offset or the anchor it names, else line 1. yaml.v3 quotes
// anchors and tags it cannot read; those quotes are cut to an excerpt.
func (c *Checker) syntaxError(err error, data []byte) {
	msg := err.Error()
	line := 1
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		if parserProblemRE.MatchString(msg) {
			line++
		}
	} else if m := offsetRE.FindStringSubmatch(msg); m != nil {
		if off, err := strconv.Atoi(m[1]); err == nil && off >= 0 {
			line = bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
		}
	} else if m := anchorRE.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = bytes.Count(data[:i], []byte("\n")) + 1
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = lineRE.ReplaceAllString(msg, "")
	msg = strings.TrimLeft(msg, ": ")
	msg = quotedRE.ReplaceAllStringFunc(msg, func(q string) string { return "'" + Excerpt(q[1:len(q)-1]) + "'" })
	c.AddAt(line, "invalid YAML: %s", msg)
}
