// Package openapi holds hostemu's OpenAPI 3.1 descriptions, the one source of truth
// for what its APIs accept and answer: hosting.yaml (the hosting and decryption
// services) and control.yaml (the control API), embedded in the binary. The HTTP layer
// serves them (GET /openapi.json|yaml, /_emulator/openapi.json|yaml), the command line
// prints them, and the black-box tests validate every request and answer against them.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed hosting.yaml
var hostingYAML []byte

// defaultServer is the servers URL written in the files: hostemu's default address.
// A served copy replaces it with the address it was asked on.
const defaultServer = "http://127.0.0.1:4700"

// Doc is one description, ready to serve: its YAML as written and its JSON, converted
// once, each cut around the servers URL so that a request's own goes in without
// parsing anything again.
type Doc struct {
	name       string
	yamlBefore []byte
	yamlAfter  []byte
	jsonBefore []byte
	jsonAfter  []byte
}

// Hosting is the description of the hosting and decryption services.
func Hosting() *Doc { return hosting }

var hosting = mustLoad("hosting.yaml", hostingYAML)

// Raw is the embedded file as written, with hostemu's default address in servers: what
// the tests validate against.
func (d *Doc) Raw() []byte { return d.YAML(defaultServer) }

// Name is the embedded file's name.
func (d *Doc) Name() string { return d.name }

// YAML is the description as written, with server as the servers URL.
func (d *Doc) YAML(server string) []byte {
	out := make([]byte, 0, len(d.yamlBefore)+len(server)+len(d.yamlAfter))
	out = append(out, d.yamlBefore...)
	out = append(out, server...)
	return append(out, d.yamlAfter...)
}

// JSON is the description as JSON, with server as the servers URL.
func (d *Doc) JSON(server string) []byte {
	s, _ := json.Marshal(server) // a string always encodes
	out := make([]byte, 0, len(d.jsonBefore)+len(s)+len(d.jsonAfter))
	out = append(out, d.jsonBefore...)
	out = append(out, s...)
	return append(out, d.jsonAfter...)
}

// mustLoad prepares an embedded description; a malformed one is a build error, which
// the package's tests catch, so it panics.
func mustLoad(name string, src []byte) *Doc {
	d, err := load(name, src)
	if err != nil {
		panic(err)
	}
	return d
}

func load(name string, src []byte) (*Doc, error) {
	// the YAML is served as written: cut it at the servers URL's one place
	mark := []byte("\nservers:\n  - url: " + defaultServer + "\n")
	i := bytes.Index(src, mark)
	if i < 0 {
		return nil, fmt.Errorf("%s: no %q", name, mark)
	}
	at := i + len(mark) - len(defaultServer) - 1
	d := &Doc{name: name, yamlBefore: src[:at], yamlAfter: src[at+len(defaultServer):]}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	js := b.Bytes()
	jmark := []byte(`"servers":[{"url":` + strconv.Quote(defaultServer))
	j := bytes.Index(js, jmark)
	if j < 0 {
		return nil, fmt.Errorf("%s: no servers in the JSON", name)
	}
	at = j + len(jmark) - len(strconv.Quote(defaultServer))
	d.jsonBefore, d.jsonAfter = js[:at], js[at+len(strconv.Quote(defaultServer)):]
	return d, nil
}

// writeJSON writes a YAML node as compact JSON, keeping the order of mapping keys (a
// map would sort them, and the document reads best in the order it was written).
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return writeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if _, isString := v.(string); !isString && strings.HasPrefix(n.Tag, "!!") {
			switch n.Tag {
			case "!!null", "!!bool", "!!int", "!!float":
			default:
				v = n.Value
			}
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.Write(out)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}
