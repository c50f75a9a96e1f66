// Package coverage counts which parts of the emulated API a client's tests exercised:
// every operation of the OpenAPI description with every status and error code it
// documents, every lifecycle edge of the spec, and the injected faults that fired.
//
// The denominator is derived, not written down: Model reads the operations and their
// documented responses (x-error-codes) from the embedded hosting description and
// checks every code against apperr's catalogue, so a code documented there appears in
// coverage without a change here. Counting is by atomic counters (Counter), sized by
// the model: memory is bounded by operations × documented answers, never by requests.
package coverage

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// Response is one documented answer of an operation: a status, and the error code it
// carries ("" for a success).
type Response struct {
	Status int
	Code   string
}

// Operation is one documented operation: its method and route template, as the
// description writes it (/v1/deployments/{id}), its operationId (getDeployment) and the
// service that answers it (hosting, or cipher for the description's "decryption" tag):
// what a fault's match.operation names.
type Operation struct {
	Method    string
	Path      string
	ID        string
	Service   string
	Responses []Response
	segs      []string // the template's segments; "" is a parameter
	resp      int      // index of Responses[0] among all responses of the model
}

// Transition is one lifecycle edge of the spec. Via tells two edges with the same ends
// apart (a promote and a roll back both make a ready deployment production's).
type Transition struct {
	Resource string // deployment, domain or certificate
	From, To string
	Via      string
}

// Lifecycle edges of the spec (PRODUCT.md "Lifecycles"; the spec's promote and roll
// back).
var transitions = []Transition{
	{"deployment", "queued", "building", ""},
	{"deployment", "building", "ready", ""},
	{"deployment", "building", "error", ""},
	{"deployment", "ready", "error", ""},
	{"deployment", "ready", "production", "promote"},
	{"deployment", "ready", "production", "rollback"},
	{"domain", "pending", "verifying", ""},
	{"domain", "verifying", "active", ""},
	{"domain", "pending", "error", ""},
	{"domain", "verifying", "error", ""},
	{"certificate", "pending", "issued", "issue"},
	{"certificate", "issued", "issued", "renewal"},
	{"certificate", "issued", "error", "renewal"},
}

// FaultActions are what an injected fault can do, in the order coverage lists them. A
// firing counts its effect (status, error, rate_limit, timeout, drop, pass, or delay
// when a delay is all it adds), and besides each way it changed the answer (headers,
// body, break_<kind>) and then when it was a step of a then sequence.
var FaultActions = []string{"status", "rate_limit", "delay", "drop", "timeout",
	"error", "headers", "body", "break_reset", "break_empty", "break_truncate", "break_malformed", "break_slow", "break_wrong_type",
	"then", "pass"}

// Model is what coverage counts against.
type Model struct {
	Operations  []Operation
	Transitions []Transition
	responses   int                // all responses of all operations
	byRoute     map[string]*[5]int // gin route template → index of its operation per method slot
	trans       map[Transition]int // edge → index
	faults      map[string]int     // action → index
}

var (
	defaultOnce  sync.Once
	defaultModel *Model
)

// Default is the model of the embedded hosting description. Its operations are read
// from model_gen.go, which TestGeneratedModelIsCurrent holds to what Build reads from
// hosting.yaml (`go generate ./emulator/internal/coverage/` writes it again): a YAML
// parse of the 50 KB description was a quarter of the binary's start-up CPU, and the
// first world needs the model (the fault matcher's operations come from it). Each
// code is checked against the error catalogue here as in Build, so an error is a
// build error: it panics, and the package's tests catch it.
func Default() *Model {
	defaultOnce.Do(func() {
		m, err := assemble(generatedOperations())
		if err != nil {
			panic(err)
		}
		defaultModel = m
	})
	return defaultModel
}

// methodSlot numbers the methods the description uses; HEAD counts as GET (every GET
// route answers HEAD, which the description does not list apart).
func methodSlot(m string) int {
	switch m {
	case "GET", "HEAD":
		return 0
	case "POST":
		return 1
	case "PUT":
		return 2
	case "DELETE":
		return 3
	case "PATCH":
		return 4
	}
	return -1
}

// Build derives a model from an OpenAPI description (YAML or JSON): every operation
// under /v1/ with every status it documents, each error status once per code of its
// x-error-codes (its own, or its $ref'd component's). The default response (an
// injected fault's, any status) is not part of it. Every code must be in apperr's
// catalogue with the status it is documented under.
func Build(doc []byte) (*Model, error) {
	ops, err := readOperations(doc)
	if err != nil {
		return nil, err
	}
	return assemble(ops)
}

// readOperations reads Build's operations from a description, in the model's order:
// paths sorted, methods in methodSlot's order, statuses sorted, codes sorted.
func readOperations(doc []byte) ([]Operation, error) {
	var root struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Responses map[string]rawResponse `yaml:"responses"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("coverage: the description: %w", err)
	}
	var ops []Operation
	paths := make([]string, 0, len(root.Paths))
	for p := range root.Paths {
		if strings.HasPrefix(p, "/v1/") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		methods := make([]string, 0, len(root.Paths[p]))
		for meth := range root.Paths[p] {
			if methodSlot(strings.ToUpper(meth)) >= 0 {
				methods = append(methods, meth)
			}
		}
		sort.Slice(methods, func(i, j int) bool {
			return methodSlot(strings.ToUpper(methods[i])) < methodSlot(strings.ToUpper(methods[j]))
		})
		for _, meth := range methods {
			node := root.Paths[p][meth]
			var op struct {
				ID        string                 `yaml:"operationId"`
				Tags      []string               `yaml:"tags"`
				Responses map[string]rawResponse `yaml:"responses"`
			}
			if err := node.Decode(&op); err != nil {
				return nil, fmt.Errorf("coverage: %s %s: %w", strings.ToUpper(meth), p, err)
			}
			o := Operation{Method: strings.ToUpper(meth), Path: p, ID: op.ID, Service: "hosting"}
			if slices.Contains(op.Tags, "decryption") {
				o.Service = "cipher"
			}
			statuses := make([]string, 0, len(op.Responses))
			for s := range op.Responses {
				if s != "default" {
					statuses = append(statuses, s)
				}
			}
			sort.Strings(statuses)
			for _, s := range statuses {
				status, err := strconv.Atoi(s)
				if err != nil || status < 100 || status > 599 {
					return nil, fmt.Errorf("coverage: %s %s: response %q is not a status", o.Method, p, s)
				}
				r := op.Responses[s]
				if r.Ref != "" {
					name := strings.TrimPrefix(r.Ref, "#/components/responses/")
					c, ok := root.Components.Responses[name]
					if !ok {
						return nil, fmt.Errorf("coverage: %s %s %d: no component response %q", o.Method, p, status, r.Ref)
					}
					r = c
				}
				if status < 400 {
					o.Responses = append(o.Responses, Response{Status: status})
					continue
				}
				if len(r.Codes) == 0 {
					return nil, fmt.Errorf("coverage: %s %s %d: an error response without x-error-codes", o.Method, p, status)
				}
				codes := append([]string(nil), r.Codes...)
				sort.Strings(codes)
				for _, code := range codes {
					o.Responses = append(o.Responses, Response{Status: status, Code: code})
				}
			}
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("coverage: the description has no operation under /v1/")
	}
	return ops, nil
}

// assemble makes the model of ops (Method, Path, ID, Service and Responses set; the
// slice is the model's from then on): every error code checked against apperr's
// catalogue with the status it is documented under, and the indexes derived.
func assemble(ops []Operation) (*Model, error) {
	m := &Model{byRoute: map[string]*[5]int{}, trans: map[Transition]int{}, faults: map[string]int{}}
	for _, o := range ops {
		for _, r := range o.Responses {
			if r.Code == "" {
				continue
			}
			d, ok := apperr.Lookup(apperr.Code(r.Code))
			if !ok {
				return nil, fmt.Errorf("coverage: %s %s %d: code %q is not in the error catalogue", o.Method, o.Path, r.Status, r.Code)
			}
			if d.Status != r.Status {
				return nil, fmt.Errorf("coverage: %s %s %d: code %q is a %d in the error catalogue", o.Method, o.Path, r.Status, r.Code, d.Status)
			}
		}
		o.resp = m.responses
		m.responses += len(o.Responses)
		for _, seg := range strings.Split(strings.TrimPrefix(o.Path, "/"), "/") {
			if strings.HasPrefix(seg, "{") {
				seg = ""
			}
			o.segs = append(o.segs, seg)
		}
		i := len(m.Operations)
		m.Operations = append(m.Operations, o)
		route := ginRoute(o.Path)
		slots := m.byRoute[route]
		if slots == nil {
			slots = &[5]int{-1, -1, -1, -1, -1}
			m.byRoute[route] = slots
		}
		slots[methodSlot(o.Method)] = i
	}
	m.Transitions = append([]Transition(nil), transitions...)
	for i, t := range m.Transitions {
		m.trans[t] = i
	}
	for i, a := range FaultActions {
		m.faults[a] = i
	}
	return m, nil
}

// rawResponse is what Build reads of a response object.
type rawResponse struct {
	Ref   string   `yaml:"$ref"`
	Codes []string `yaml:"x-error-codes"`
}

// ginRoute is a template as gin writes it: /v1/deployments/:id.
func ginRoute(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

// Op finds the operation answering method on a request: by the route template the
// router matched (gin's form), when it matched one, else by the path itself — only a
// request the pipeline refused before routing (a rate limit, an injected fault) has
// none. -1 when no operation does.
func (m *Model) Op(method, route, path string) int {
	slot := methodSlot(method)
	if slot < 0 {
		return -1
	}
	if route != "" {
		if s := m.byRoute[route]; s != nil {
			return s[slot]
		}
		return -1
	}
	for i := range m.Operations {
		o := &m.Operations[i]
		if methodSlot(o.Method) == slot && matches(o.segs, path) {
			return i
		}
	}
	return -1
}

// OpByID is the index of the operation whose operationId is id, or -1.
func (m *Model) OpByID(id string) int {
	for i := range m.Operations {
		if m.Operations[i].ID == id && id != "" {
			return i
		}
	}
	return -1
}

// matches reports whether path, /a/b/c, fits the template's segments ("" matches any
// non-empty segment), without allocating.
func matches(segs []string, path string) bool {
	if len(path) == 0 || path[0] != '/' {
		return false
	}
	rest := path[1:]
	for i, s := range segs {
		j := strings.IndexByte(rest, '/')
		var seg string
		if j < 0 {
			seg, rest = rest, ""
			if i != len(segs)-1 {
				return false
			}
		} else {
			seg, rest = rest[:j], rest[j+1:]
			if i == len(segs)-1 {
				return false
			}
		}
		if seg == "" || (s != "" && s != seg) {
			return false
		}
	}
	return true
}

// response is the index among all responses of op's answer status/code, or -1 when
// the description does not document it.
func (m *Model) response(op, status int, code string) int {
	o := &m.Operations[op]
	for i, r := range o.Responses {
		if r.Status == status && r.Code == code {
			return o.resp + i
		}
	}
	return -1
}

//go:generate go test -run ^TestGeneratedModelIsCurrent$ -update .
