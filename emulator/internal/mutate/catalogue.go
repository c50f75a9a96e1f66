package mutate

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// Op is one operation of the catalogue: the operationId, its route, and the error codes
// its description documents (x-error-codes, the catalogue coverage counts against), in
// the description's order.
type Op struct {
	ID     string
	Method string
	Path   string
	Codes  []string
	Status map[string]int // code → status
}

// Catalogue is what mutants are made of: every documented operation, in the coverage
// model's order.
type Catalogue struct {
	Ops    []Op
	byName map[string]int // "METHOD /path" → index
	byID   map[string]int
	codes  []string // every code of every operation, once, sorted as met
}

// DefaultCatalogue reads the embedded hosting description: coverage's model, with each
// operation's operationId.
func DefaultCatalogue() (*Catalogue, error) {
	return buildCatalogue(coverage.Default(), openapi.Hosting().Raw())
}

func buildCatalogue(m *coverage.Model, doc []byte) (*Catalogue, error) {
	var root struct {
		Paths map[string]map[string]struct {
			ID string `yaml:"operationId"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("mutate: the description: %w", err)
	}
	c := &Catalogue{byName: map[string]int{}, byID: map[string]int{}}
	seen := map[string]bool{}
	for _, o := range m.Operations {
		id := root.Paths[o.Path][strings.ToLower(o.Method)].ID
		if id == "" {
			return nil, fmt.Errorf("mutate: %s %s has no operationId in the description", o.Method, o.Path)
		}
		op := Op{ID: id, Method: o.Method, Path: o.Path, Status: map[string]int{}}
		for _, r := range o.Responses {
			if r.Code == "" || op.Status[r.Code] != 0 {
				continue
			}
			op.Codes = append(op.Codes, r.Code)
			op.Status[r.Code] = r.Status
			if !seen[r.Code] {
				seen[r.Code] = true
				c.codes = append(c.codes, r.Code)
			}
		}
		c.byName[o.Method+" "+o.Path] = len(c.Ops)
		c.byID[id] = len(c.Ops)
		c.Ops = append(c.Ops, op)
	}
	return c, nil
}

// IDs are the operationIds, in order.
func (c *Catalogue) IDs() []string {
	out := make([]string, len(c.Ops))
	for i, o := range c.Ops {
		out[i] = o.ID
	}
	return out
}

// Codes are every documented error code, and reset.
func (c *Catalogue) Codes() []string {
	return append(append([]string(nil), c.codes...), Reset)
}
