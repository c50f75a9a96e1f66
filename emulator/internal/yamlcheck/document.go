package yamlcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

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

// syntaxREs are the patterns syntaxError reads yaml.v3's messages with, compiled on
// the first syntax error rather than at every start of the binary.
var syntaxREs = sync.OnceValue(func() (r struct{ line, offset, anchor, quoted, parserProblem *regexp.Regexp }) {
	r.line = regexp.MustCompile(`\bline (\d+)\b`)
	r.offset = regexp.MustCompile(`\boffset (\d+)\b`)
	r.anchor = regexp.MustCompile(`unknown anchor '(.*)' referenced`)
	r.quoted = regexp.MustCompile(`'[^']*'`)
	// parserProblem matches the problems of yaml.v3's parser (not its scanner). yaml.v3
	// adds 1 to its 0-based line for scanner errors only, so a parser error's "line N"
	// is the line before the one the user sees: the line of a construct left open, or
	// of the offending token when the construct starts on line 1.
	r.parserProblem = regexp.MustCompile(`^yaml: (line \d+: )?(did not find expected|found duplicate %|found incompatible YAML|found undefined tag)`)
	return r
})

// syntaxError records a YAML syntax error at the line yaml names (counted from 1), else
// the line of the byte offset or the anchor it names, else line 1. yaml.v3 quotes
// anchors and tags it cannot read; those quotes are cut to an excerpt.
func (c *Checker) syntaxError(err error, data []byte) {
	msg := err.Error()
	line := 1
	re := syntaxREs()
	if m := re.line.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		if re.parserProblem.MatchString(msg) {
			line++
		}
	} else if m := re.offset.FindStringSubmatch(msg); m != nil {
		if off, err := strconv.Atoi(m[1]); err == nil && off >= 0 {
			line = bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
		}
	} else if m := re.anchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = bytes.Count(data[:i], []byte("\n")) + 1
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = re.line.ReplaceAllString(msg, "")
	msg = strings.TrimLeft(msg, ": ")
	msg = re.quoted.ReplaceAllStringFunc(msg, func(q string) string { return "'" + Excerpt(q[1:len(q)-1]) + "'" })
	line, col, msg := locateSyntaxError(data, line, msg)
	c.add(line, col, "invalid YAML: %s", msg)
}

// locateSyntaxError gives a syntax error at line its column, and says more where
// yaml.v3 says too little: a tab in an indentation is named a tab, at its column; a
// block yaml.v3 found left open ("did not find expected key") is pointed at the line
// whose indentation lines up with no block above it, where there is one at or after
// line. Otherwise the column is the line's first character.
func locateSyntaxError(data []byte, line int, msg string) (int, int, string) {
	text := lineOf(data, line)
	if tab := leadingTab(text); tab >= 0 && (strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab character")) {
		return line, tab + 1, "a tab character in the indentation: YAML indents with spaces only"
	}
	if strings.HasPrefix(msg, "did not find expected") {
		if at, col, why := misindented(data, line); at > 0 {
			return at, col, msg + "; " + why
		}
	}
	if indent := len(text) - len(strings.TrimLeft(text, " \t")); indent < len(text) {
		return line, indent + 1, msg
	}
	return line, 0, msg
}

// lineOf is line n of data (counted from 1), without its end, or "".
func lineOf(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return strings.TrimSuffix(string(data), "\r")
}

// leadingTab is the index of the first tab among text's leading blanks, or -1.
func leadingTab(text string) int {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case ' ':
		case '\t':
			return i
		default:
			return -1
		}
	}
	return -1
}

// misindented finds, from line from on, the first line of a block whose indentation
// lines up with no block above it: deeper than its sibling without the line above
// opening a block (a key ending in ":", a "- " item's content), or between two
// enclosing levels. It returns the line, its column and why, or 0 when every line
// lines up. It reads indentation only: lines inside flow collections and block
// scalars are not told apart, which is why it only refines an error yaml.v3 reported.
func misindented(data []byte, from int) (line, col int, why string) {
	var levels []int          // the indentations of the enclosing lines, outermost first
	opens, child := false, -1 // the line above opens a block; the column a "- " item's content starts at
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimRight(raw, " \r")
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '\t' {
			continue
		}
		d := len(text) - len(trimmed)
		above := levels
		for len(levels) > 0 && levels[len(levels)-1] > d {
			levels = levels[:len(levels)-1]
		}
		switch top := len(levels) - 1; {
		case top < 0 || levels[top] < d:
			if top >= 0 && !opens && d != child && i+1 >= from {
				return i + 1, d + 1, misindentedWhy(d, above, child)
			}
			levels = append(levels, d)
		}
		body := trimmed
		if c := strings.Index(body, " #"); c >= 0 {
			body = strings.TrimRight(body[:c], " ")
		}
		opens = strings.HasSuffix(body, ":") || body == "-" || strings.HasSuffix(body, "|") || strings.HasSuffix(body, ">")
		child = -1
		if strings.HasPrefix(body, "- ") {
			child = d + 2 + len(body[2:]) - len(strings.TrimLeft(body[2:], " "))
		}
	}
	return 0, 0, ""
}

// misindentedWhy words why a line indented by d spaces lines up with nothing: the
// indentations in use above it.
func misindentedWhy(d int, levels []int, child int) string {
	in := make([]string, 0, len(levels)+1)
	for _, l := range levels {
		in = append(in, strconv.Itoa(l))
	}
	if child >= 0 {
		in = append(in, strconv.Itoa(child))
	}
	spaces := "spaces"
	if d == 1 {
		spaces = "space"
	}
	return fmt.Sprintf("this line is indented by %d %s, which lines up with no block above it (indented by %s)", d, spaces, strings.Join(in, ", "))
}
