package openapitest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
	"github.com/hostemu/hostemu/emulator/internal/openapi/openapitest"
)

// Both descriptions are valid OpenAPI 3.1 documents (the validator checks them against
// the specification's schema), with no duplicate key, and their JSON is their YAML.
func TestDescriptionsAreValid(t *testing.T) {
	for _, doc := range []*openapi.Doc{openapi.Hosting(), openapi.Control()} {
		t.Run(doc.Name(), func(t *testing.T) {
			if _, err := openapitest.New(doc.Raw()); err != nil {
				t.Fatal(err)
			}
			var fromYAML, fromJSON any
			if err := yaml.Unmarshal(doc.YAML("http://h.test:1"), &fromYAML); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(doc.JSON("http://h.test:1"), &fromJSON); err != nil {
				t.Fatal(err)
			}
			y, _ := json.Marshal(fromYAML)
			j, _ := json.Marshal(fromJSON)
			if string(y) != string(j) {
				t.Errorf("the JSON differs from the YAML")
			}
			if strings.Contains(string(j), "127.0.0.1:4700/_emulator\"") || !strings.Contains(string(j), `"url":"http://h.test:1`) {
				t.Errorf("servers keep the default address: %.300s", j)
			}
		})
	}
}

// Every operation has an operationId, an x-required-scope where it needs a hosting
// token, and every response an example, as generators and readers expect.
func TestEveryOperationIsComplete(t *testing.T) {
	for _, doc := range []*openapi.Doc{openapi.Hosting(), openapi.Control()} {
		type response struct {
			Content map[string]struct {
				Example any `yaml:"example"`
			} `yaml:"content"`
		}
		var d struct {
			Paths      map[string]map[string]yaml.Node `yaml:"paths"`
			Components struct {
				Responses map[string]response `yaml:"responses"`
			} `yaml:"components"`
		}
		if err := yaml.Unmarshal(doc.Raw(), &d); err != nil {
			t.Fatal(err)
		}
		for name, r := range d.Components.Responses {
			for mt, c := range r.Content {
				if c.Example == nil {
					t.Errorf("%s response %s %s: no example", doc.Name(), name, mt)
				}
			}
		}
		for path, item := range d.Paths {
			for method, node := range item {
				if method == "parameters" || method == "servers" {
					continue
				}
				var op struct {
					OperationID string              `yaml:"operationId"`
					Scope       string              `yaml:"x-required-scope"`
					Security    *[]any              `yaml:"security"`
					Responses   map[string]response `yaml:"responses"`
				}
				if err := node.Decode(&op); err != nil {
					t.Fatal(err)
				}
				where := doc.Name() + " " + method + " " + path
				if op.OperationID == "" {
					t.Errorf("%s: no operationId", where)
				}
				if doc == openapi.Hosting() && op.Scope == "" && op.Security == nil {
					t.Errorf("%s: no x-required-scope", where)
				}
				for status, r := range op.Responses {
					for mt, c := range r.Content {
						if c.Example == nil {
							t.Errorf("%s %s %s: no example", where, status, mt)
						}
					}
				}
			}
		}
	}
}

// The control description holds copies of the hosting schemas it answers with (a
// served document must stand alone for generators): each copy is the hosting one.
func TestControlSharesHostingSchemas(t *testing.T) {
	schemas := func(doc *openapi.Doc) map[string]any {
		var d struct {
			Components struct {
				Schemas map[string]any `yaml:"schemas"`
			} `yaml:"components"`
		}
		if err := yaml.Unmarshal(doc.Raw(), &d); err != nil {
			t.Fatal(err)
		}
		return d.Components.Schemas
	}
	hosting, shared := schemas(openapi.Hosting()), 0
	for name, s := range schemas(openapi.Control()) {
		h, ok := hosting[name]
		if !ok {
			continue
		}
		shared++
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(h)
		if string(a) != string(b) {
			t.Errorf("schema %s differs between control.yaml and hosting.yaml", name)
		}
	}
	if shared == 0 {
		t.Error("no shared schemas")
	}
}
