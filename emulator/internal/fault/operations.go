package fault

import (
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// Operation is one operation of the emulated APIs as the embedded OpenAPI description
// names it: the one source of a fault's match.operation and of the route templates a
// match.path is checked against.
type Operation struct {
	ID       string // operationId: createDeployment
	Method   string // POST
	Template string // /v1/deployments/{id}
	Service  string // hosting or cipher (the description's "decryption" tag)
	segs     []string
}

// paramSeg stands for a template's parameter segment ({id}): any non-empty segment.
const paramSeg = "{}"

var (
	opsOnce sync.Once
	ops     []*Operation
)

// Operations are the emulated APIs' operations under /v1/, in the description's order.
// The description is embedded: a problem reading it is a build error, which the
// package's tests catch, so it panics.
func Operations() []*Operation {
	opsOnce.Do(func() {
		var doc struct {
			Paths yaml.Node `yaml:"paths"`
		}
		if err := yaml.Unmarshal(openapi.Hosting().Raw(), &doc); err != nil {
			panic("fault: reading the hosting description: " + err.Error())
		}
		p := &doc.Paths
		for i := 0; i+1 < len(p.Content); i += 2 {
			tmpl := p.Content[i].Value
			if !strings.HasPrefix(tmpl, "/v1/") {
				continue
			}
			var methods map[string]struct {
				ID   string   `yaml:"operationId"`
				Tags []string `yaml:"tags"`
			}
			if err := p.Content[i+1].Decode(&methods); err != nil {
				panic("fault: reading the hosting description: " + err.Error())
			}
			for _, m := range []string{"get", "post", "put", "patch", "delete"} {
				o, has := methods[m]
				if !has || o.ID == "" {
					continue
				}
				svc := "hosting"
				if slices.Contains(o.Tags, "decryption") {
					svc = "cipher"
				}
				op := &Operation{ID: o.ID, Method: strings.ToUpper(m), Template: tmpl, Service: svc}
				for _, s := range strings.Split(tmpl, "/") {
					if strings.HasPrefix(s, "{") {
						s = paramSeg
					}
					op.segs = append(op.segs, s)
				}
				ops = append(ops, op)
			}
		}
	})
	return ops
}

// OperationByID is the operation of that operationId, or nil.
func OperationByID(id string) *Operation {
	for _, op := range Operations() {
		if op.ID == id {
			return op
		}
	}
	return nil
}

func operationIDs() []string {
	var ids []string
	for _, op := range Operations() {
		ids = append(ids, op.ID)
	}
	return ids
}

// templates are the route templates of a service ("" : both APIs), each once.
func templates(service string) []string {
	var out []string
	for _, op := range Operations() {
		if (service == "" || op.Service == service) && !slices.Contains(out, op.Template) {
			out = append(out, op.Template)
		}
	}
	return out
}

// matches reports whether a request is this operation's: its service, its method (HEAD
// for a GET) and a path of its template, a parameter being one non-empty segment.
func (op *Operation) matches(method, path, service string) bool {
	if service != op.Service || !(method == op.Method || method == "HEAD" && op.Method == "GET") {
		return false
	}
	for i, seg := range op.segs {
		cur := path
		if i < len(op.segs)-1 {
			var ok bool
			if cur, path, ok = strings.Cut(path, "/"); !ok {
				return false
			}
		}
		if seg == paramSeg {
			if cur == "" || strings.IndexByte(cur, '/') >= 0 {
				return false
			}
		} else if cur != seg {
			return false
		}
	}
	return true
}

// reachable reports whether some path matched by the glob pattern is also a path of a
// route template of the service ("": hosting or cipher).
func reachable(pattern, service string) bool {
	for _, t := range templates(service) {
		if intersects(pattern, t) {
			return true
		}
	}
	return false
}

// intersects reports whether a path exists that both the glob pattern (`*`: any bytes,
// '/' included) and the route template (`{name}`: one or more bytes other than '/')
// match. It explores the product of the two automata, breadth first, over at most
// (len(pattern)+1) × (len(template)+1) × 2 states, so user patterns cannot blow it up.
func intersects(pattern, template string) bool {
	type item struct {
		b     byte
		param bool
	}
	var items []item
	for i := 0; i < len(template); i++ {
		if template[i] == '{' {
			if j := strings.IndexByte(template[i:], '}'); j > 0 {
				items = append(items, item{param: true})
				i += j
				continue
			}
		}
		items = append(items, item{b: template[i]})
	}
	type state struct {
		i, j int
		in   bool
	} // in: inside a parameter with a byte taken
	seen := map[state]bool{}
	queue := []state{{0, 0, false}}
	push := func(s state) {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	seen[queue[0]] = true
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		// epsilon moves: a `*` may match nothing; a parameter with a byte may end
		if s.i < len(pattern) && pattern[s.i] == '*' {
			push(state{s.i + 1, s.j, s.in})
		}
		if s.in {
			push(state{s.i, s.j + 1, false})
		}
		if s.i == len(pattern) && s.j == len(items) && !s.in {
			return true
		}
		if s.i >= len(pattern) || s.j >= len(items) {
			continue
		}
		// consuming one byte c, which both sides must accept
		star := pattern[s.i] == '*'
		ni := s.i + 1
		if star {
			ni = s.i // a `*` stays to take more
		}
		it := items[s.j]
		switch {
		case !it.param:
			if star || pattern[s.i] == it.b {
				push(state{ni, s.j + 1, false})
			}
		default: // a parameter takes any byte but '/'
			if star || pattern[s.i] != '/' {
				push(state{ni, s.j, true})
			}
		}
	}
	return false
}

// RouteMatches reports whether path is one of op's route's paths (any method).
func RouteMatches(op *Operation, path string) bool {
	return op.matches(op.Method, path, op.Service)
}
