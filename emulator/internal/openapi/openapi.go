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
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed hosting.yaml
var hostingYAML []byte

//go:embed control.yaml
var controlYAML []byte

// DefaultServer is the servers URL written in the files: hostemu's default address.
// A served copy replaces it with the address it was asked on.
const DefaultServer = "http://127.0.0.1:4700"

// Doc is one description, ready to serve: its YAML as written and its JSON, converted
// once, each cut where a servers URL names hostemu's default address, so that the
// address a request was made to goes in without parsing anything again.
type Doc struct {
	name string
	yaml [][]byte // the YAML, cut around every servers URL's default address
	// json is the JSON, likewise, converted on first use: parsing the YAML was most of
	// the binary's start-up, and most runs never serve the JSON
	json func() ([][]byte, error)
}

// Hosting is the description of the hosting and decryption services.
func Hosting() *Doc { return hosting }

// Control is the description of the control API.
func Control() *Doc { return control }

var (
	hosting = mustLoad("hosting.yaml", hostingYAML)
	control = mustLoad("control.yaml", controlYAML)
)

// Raw is the embedded file as written, with hostemu's default address in servers: what
// the tests validate against.
func (d *Doc) Raw() []byte { return d.YAML(DefaultServer) }

// Name is the embedded file's name.
func (d *Doc) Name() string { return d.name }

// YAML is the description as written, with server (a base URL, no trailing slash) in
// place of hostemu's default address in every servers URL.
func (d *Doc) YAML(server string) []byte {
	return bytes.Join(d.yaml, []byte(yamlServer+server))
}

// JSON is the description as JSON, with server in place of hostemu's default address
// in every servers URL.
func (d *Doc) JSON(server string) []byte {
	parts, err := d.json()
	if err != nil {
		panic(err) // a build error, which the package's tests catch
	}
	s, _ := json.Marshal(server) // a string always encodes
	return bytes.Join(parts, append([]byte(jsonServer), s[1:len(s)-1]...))
}

// The forms a servers URL takes in the YAML as written (a list item, the url key
// first) and in the JSON made from it; nothing else in the files starts so.
const (
	yamlServer = "- url: "
	jsonServer = `{"url":"`
)

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
	d := &Doc{name: name, yaml: bytes.Split(src, []byte(yamlServer+DefaultServer))}
	if len(d.yaml) < 2 {
		return nil, fmt.Errorf("%s: no servers URL %s", name, DefaultServer)
	}
	d.json = sync.OnceValues(func() ([][]byte, error) {
		var root yaml.Node
		if err := yaml.Unmarshal(src, &root); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var b bytes.Buffer
		if err := writeJSON(&b, &root); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		parts := bytes.Split(b.Bytes(), []byte(jsonServer+DefaultServer))
		if len(parts) != len(d.yaml) {
			return nil, fmt.Errorf("%s: %d servers URLs in the YAML, %d in the JSON", name, len(d.yaml)-1, len(parts)-1)
		}
		return parts, nil
	})
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
