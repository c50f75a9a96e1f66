package fault

import (
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// The emulated APIs' operations are coverage's model of the hosting description
// (coverage.Default): each with its operationId, method, route template and service.
// It is the one place that knows them: a fault's match.operation names one, a request's
// operation is found by the model's router (coverage.Model.Op, which prefers the route
// the router matched when there is one), and a match.path is checked against its route
// templates.

// operationIDs are the operations' ids, for the closest one.
func operationIDs() []string {
	var ids []string
	for _, op := range coverage.Default().Operations {
		if op.ID != "" {
			ids = append(ids, op.ID)
		}
	}
	return ids
}

// templates are the route templates of a service ("" : both APIs), each once.
func templates(service string) []string {
	var out []string
	for _, op := range coverage.Default().Operations {
		if (service == "" || op.Service == service) && !slices.Contains(out, op.Path) {
			out = append(out, op.Path)
		}
	}
	return out
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
