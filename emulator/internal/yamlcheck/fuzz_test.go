package yamlcheck_test

import (
	"bytes"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// FuzzDocument feeds the checker arbitrary bytes (seeds in testdata/fuzz/FuzzDocument)
// and walks whatever it accepts with every reader: it must not panic, every problem must
// have a line inside the file, and no message may grow with the file.
func FuzzDocument(f *testing.F) {
	f.Add([]byte("a: 1\nb: [x, {c: d}]\nx-e: &e {k: v}\nf: {<<: *e, k: w}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := yamlcheck.New("f.yaml", data)
		root, ok := c.Document(data, "file", []string{"a", "b"})
		if root != nil && !ok {
			t.Fatal("a root and not ok")
		}
		walk(c, root, "", 0)
		last := bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) + 1
		for _, p := range c.Problems() {
			if p.File != "f.yaml" || p.Line < 1 || p.Line > last || p.Message == "" {
				t.Fatalf("problem %+v: want a line from 1 to %d", p, last)
			}
			if len(p.Message) > 420 {
				t.Fatalf("a %d-byte message", len(p.Message))
			}
		}
	})
}

// walk reads n with each of the checker's readers in turn, as a file's own reader would.
func walk(c *yamlcheck.Checker, n *yaml.Node, where string, depth int) {
	n = yamlcheck.Follow(n)
	if n == nil || depth > 50 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		fields, _ := c.Entries(n, where, "a", "b", "c", "k", "x-*")
		for _, f := range fields {
			walk(c, f.Value, where+"."+f.Key.Value, depth+1)
		}
	case yaml.SequenceNode:
		items, _ := c.Seq(n, where)
		for _, item := range items {
			walk(c, item, where+"[]", depth+1)
		}
	default:
		switch depth % 5 {
		case 0:
			c.Word(n, where)
		case 1:
			c.Integer(n, where, -5, 5)
		case 2:
			c.Number(n, where)
		case 3:
			c.Bool(n, where)
		default:
			c.Str(n, where)
		}
	}
}
