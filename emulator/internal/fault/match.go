package fault

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// MaxMatchEntries bounds the entries of each of a match's maps (query, headers, body),
// and MaxMatchGlob the bytes of each name and glob in them: a fault is checked against
// every request of its world, so its cost per request stays small and known. (A path or
// host glob is bounded by MaxGlob.)
const (
	MaxMatchEntries = 16
	MaxMatchGlob    = 512
)

// BodyValue is the value a match.body path must hold, kept as canonical JSON (keys
// sorted, numbers as written), so that it compares as the journal's matcher compares.
type BodyValue string

// UnmarshalJSON keeps any JSON value in its canonical form.
func (v *BodyValue) UnmarshalJSON(b []byte) error {
	c, err := canonicalJSON(b)
	if err != nil {
		return err
	}
	*v = BodyValue(c)
	return nil
}

// MarshalJSON writes the value as the JSON it is.
func (v BodyValue) MarshalJSON() ([]byte, error) {
	if v == "" {
		return []byte("null"), nil
	}
	return []byte(v), nil
}

// BodyValueOf is v (a value decoded from JSON or YAML: strings, numbers, bools, nil,
// maps and slices of them) as a BodyValue.
func BodyValueOf(v any) (BodyValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	c, err := canonicalJSON(b)
	return BodyValue(c), err
}

func canonicalJSON(b []byte) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	out, err := json.Marshal(x)
	return string(out), err
}

// matcher is a fault's match compiled once, when the fault is added: its operation
// resolved, its header names folded, its body paths parsed.
type matcher struct {
	// the plain fields first, copied here so that checking a fault that does not match
	// touches only its matcher: method ("" any; an operation's), service, scope, path,
	// host (lower case), token
	method, service, scope, path, host, token string
	headOK                                    bool // a GET operation's method: HEAD is one too

	op      int // the operation's index in coverage.Default(), or -1
	headers []HeaderMatch
	query   [][2]string // name, glob (sorted by name)
	body    []*BodyMatch
}

// compile checks and compiles m; the error lists every problem, naming the field.
func compile(m Match) (*matcher, []string) {
	var problems []string
	c := &matcher{method: strings.ToUpper(m.Method), service: m.Service, scope: m.Scope, path: m.Path, host: strings.ToLower(m.Host), token: m.Token, op: -1}
	if m.Operation != "" {
		model := coverage.Default()
		if i := model.OpByID(m.Operation); i >= 0 {
			op := &model.Operations[i]
			c.op = i
			if c.method == "" {
				c.method, c.headOK = op.Method, op.Method == "GET"
			}
			if c.service == "" {
				c.service = op.Service
			}
			if m.Service != "" && m.Service != op.Service {
				problems = append(problems, fmt.Sprintf("match.operation %q is the %s service's, not %s's", m.Operation, op.Service, m.Service))
			}
			if m.Method != "" && m.Method != op.Method && !(m.Method == "HEAD" && op.Method == "GET") {
				problems = append(problems, fmt.Sprintf("match.operation %q is %s %s, not %s", m.Operation, op.Method, op.Path, m.Method))
			}
		} else {
			problems = append(problems, fmt.Sprintf("match.operation %q: unknown operation%s", m.Operation, closestOf(m.Operation, operationIDs())))
		}
	}
	if p := m.Path; p != "" && p != "*" && strings.HasPrefix(p, "/") && routed(m) {
		if !reachable(p, m.Service) {
			problems = append(problems, fmt.Sprintf("match.path %q: no route of %s can match it%s", p, serviceName(m.Service), closestOf(p, templates(m.Service))))
		}
	}
	check := func(field string, n int) bool {
		if n > MaxMatchEntries {
			problems = append(problems, fmt.Sprintf("match.%s: at most %d entries", field, MaxMatchEntries))
			return false
		}
		return true
	}
	if check("query", len(m.Query)) {
		for _, k := range sortedKeys(m.Query) {
			g := m.Query[k]
			if k == "" || len(k) > MaxMatchGlob || len(g) > MaxMatchGlob {
				problems = append(problems, fmt.Sprintf("match.query %q: want a name and a glob of at most %d bytes", k, MaxMatchGlob))
				continue
			}
			c.query = append(c.query, [2]string{k, g})
		}
	}
	if check("headers", len(m.Headers)) {
		named := make(map[string]string, len(m.Headers)) // a name in one case → as given
		for _, k := range sortedKeys(m.Headers) {
			g := m.Headers[k]
			h, ok := NewHeaderMatch(k, g, true)
			if !ok || len(k) > MaxMatchGlob || len(g) > MaxMatchGlob {
				problems = append(problems, fmt.Sprintf("match.headers %q: want a header name and a glob of at most %d bytes", k, MaxMatchGlob))
				continue
			}
			if other, twice := named[strings.ToLower(k)]; twice {
				// header names are case-insensitive: both would have to hold of one header
				problems = append(problems, fmt.Sprintf("match.headers %q: names the same header as %q; give it once", k, other))
				continue
			}
			named[strings.ToLower(k)] = k
			c.headers = append(c.headers, h)
		}
	}
	if check("body", len(m.Body)) {
		for _, k := range sortedKeys(m.Body) {
			bm, err := bodyMatchOf(k, m.Body[k])
			if err != nil {
				problems = append(problems, fmt.Sprintf("match.body %q: %v", k, err))
				continue
			}
			c.body = append(c.body, bm)
		}
	}
	if len(m.Token) > 4096 {
		problems = append(problems, "match.token: at most 4096 bytes")
	}
	return c, problems
}

// routed reports whether a match's path is checked against route templates: it is for
// the APIs, not for the edge, which serves any path of a site.
func routed(m Match) bool {
	return m.Host == "" && m.Service != "edge"
}

func serviceName(s string) string {
	if s == "" {
		return "the hosting or decryption APIs"
	}
	return "the " + s + " service"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// closestOf names the known value nearest got, whatever the distance: a route or an
// operation is worth naming even when it differs by more than a typo.
func closestOf(got string, known []string) string {
	if best := yamlcheck.Nearest(got, known); best != "" {
		return fmt.Sprintf(" (closest: %q)", best)
	}
	return ""
}

// holds reports whether every field of a match but its body holds for r (method
// case-insensitively, path and host by [PathMatch], the others exactly), the cheap plain
// fields first, so that a world of faults that do not match costs a request little.
// Near misses weigh a request field by field with the same predicates.
func (c *matcher) holds(r *Request) bool {
	if !c.methodHolds(r.Method) || (c.service != "" && c.service != r.Service) || (c.scope != "" && c.scope != r.Scope) ||
		(c.token != "" && c.token != r.Token) || !c.pathHolds(r.Path) || !c.hostHolds(r.Host) {
		return false
	}
	if c.op >= 0 && r.operation() != c.op {
		return false
	}
	for _, h := range c.headers {
		if !h.In(r.Header) {
			return false
		}
	}
	if len(c.query) > 0 {
		query := r.parsedQuery()
		for i := range c.query {
			if !c.queryHolds(i, query) {
				return false
			}
		}
	}
	return true
}

// methodHolds: the match's method, in any case (HEAD for an operation's GET).
func (c *matcher) methodHolds(method string) bool {
	return c.method == "" || c.method == method || (len(c.method) == len(method) && strings.EqualFold(c.method, method)) || (c.headOK && method == "HEAD")
}

func (c *matcher) pathHolds(path string) bool { return c.path == "" || PathMatch(c.path, path) }
func (c *matcher) hostHolds(host string) bool { return c.host == "" || PathMatch(c.host, host) }

// queryHolds: the match's i-th query parameter is present with a first value its glob
// matches.
func (c *matcher) queryHolds(i int, query map[string][]string) bool {
	v, ok := query[c.query[i][0]]
	return ok && len(v) > 0 && PathMatch(c.query[i][1], v[0])
}

// parsedQuery is r's query, parsed once.
func (r *Request) parsedQuery() map[string][]string {
	if r.query == nil {
		q, _ := url.ParseQuery(r.RawQuery)
		if q == nil {
			q = url.Values{}
		}
		r.query = q
	}
	return r.query
}
