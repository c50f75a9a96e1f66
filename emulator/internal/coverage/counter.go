package coverage

import (
	"sync"
	"sync/atomic"
)

// MaxUndocumented bounds the distinct undocumented answers a Counter keeps apart (an
// injected fault may answer any status and code); more are counted together in
// Report's other_undocumented.
const MaxUndocumented = 256

// Counter counts one world's answers, transitions and faults against a model. It is
// safe for concurrent use; counting an answer or a transition takes no lock.
type Counter struct {
	m      *Model
	ops    []atomic.Int64
	resp   []atomic.Int64
	trans  []atomic.Int64
	faults []atomic.Int64

	mu    sync.Mutex // guards undoc and other
	undoc map[undocKey]int64
	other int64
}

// undocKey is an answer the description does not document for its operation.
type undocKey struct {
	op     int
	status int
	code   string
}

// NewCounter returns a counter at zero for m (Default() when nil).
func NewCounter(m *Model) *Counter {
	if m == nil {
		m = Default()
	}
	return &Counter{
		m:      m,
		ops:    make([]atomic.Int64, len(m.Operations)),
		resp:   make([]atomic.Int64, m.responses),
		trans:  make([]atomic.Int64, len(m.Transitions)),
		faults: make([]atomic.Int64, len(FaultActions)),
	}
}

// Model is what c counts against.
func (c *Counter) Model() *Model { return c.m }

// Answer counts an answer of the emulated API: method and route (the router's template,
// "" when the request was refused before routing) or path find the operation; status
// 0 is a connection dropped without an answer (it counts the operation only). Answers
// to no operation (404 for a path with no route) are not counted.
func (c *Counter) Answer(method, route, path string, status int, code string) {
	if c == nil {
		return
	}
	op := c.m.Op(method, route, path)
	if op < 0 {
		return
	}
	c.ops[op].Add(1)
	if status == 0 {
		return
	}
	if status < 400 {
		code = ""
	}
	if i := c.m.response(op, status, code); i >= 0 {
		c.resp[i].Add(1)
		return
	}
	c.mu.Lock()
	k := undocKey{op, status, code}
	if _, ok := c.undoc[k]; ok || len(c.undoc) < MaxUndocumented {
		if c.undoc == nil {
			c.undoc = map[undocKey]int64{}
		}
		c.undoc[k]++
	} else {
		c.other++
	}
	c.mu.Unlock()
}

// Transition counts a lifecycle edge; an edge the spec does not have (a status forced
// through the control API, say) is not counted.
func (c *Counter) Transition(resource, from, to, via string) {
	if c == nil {
		return
	}
	if i, ok := c.m.trans[Transition{resource, from, to, via}]; ok {
		c.trans[i].Add(1)
	}
}

// Fault counts an injected fault that fired, by what it did.
func (c *Counter) Fault(action string) {
	if c == nil {
		return
	}
	if i, ok := c.m.faults[action]; ok {
		c.faults[i].Add(1)
	}
}

// Reset starts counting afresh.
func (c *Counter) Reset() {
	for _, s := range [][]atomic.Int64{c.ops, c.resp, c.trans, c.faults} {
		for i := range s {
			s[i].Store(0)
		}
	}
	c.mu.Lock()
	c.undoc, c.other = nil, 0
	c.mu.Unlock()
}

// Add adds o's counts to c (the union over namespaces); both count against one model.
func (c *Counter) Add(o *Counter) {
	if o == nil || o.m != c.m {
		return
	}
	pairs := [][2][]atomic.Int64{{c.ops, o.ops}, {c.resp, o.resp}, {c.trans, o.trans}, {c.faults, o.faults}}
	for _, p := range pairs {
		for i := range p[1] {
			if n := p[1][i].Load(); n != 0 {
				p[0][i].Add(n)
			}
		}
	}
	o.mu.Lock()
	undoc, other := make(map[undocKey]int64, len(o.undoc)), o.other
	for k, n := range o.undoc {
		undoc[k] = n
	}
	o.mu.Unlock()
	c.mu.Lock()
	for k, n := range undoc {
		if _, ok := c.undoc[k]; ok || len(c.undoc) < MaxUndocumented {
			if c.undoc == nil {
				c.undoc = map[undocKey]int64{}
			}
			c.undoc[k] += n
		} else {
			c.other += n
		}
	}
	c.other += other
	c.mu.Unlock()
}

// Union is a new counter holding the sum of cs (nil ones skipped) over m.
func Union(m *Model, cs ...*Counter) *Counter {
	u := NewCounter(m)
	for _, c := range cs {
		u.Add(c)
	}
	return u
}

// Load sets c's counts to r's (a failure bundle's coverage.json, the coverage of the
// world it was taken from): what r lists that the model knows is counted as r says,
// the rest starts at zero; an operation or edge the model does not have (a bundle of
// another hostemu's description) is let be. Negative counts are taken as zero.
func (c *Counter) Load(r Report) {
	c.Reset()
	m := c.m
	opAt := make(map[string]int, len(m.Operations))
	for i, o := range m.Operations {
		opAt[o.Method+" "+o.Path] = i
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range r.Operations {
		op, ok := opAt[o.Method+" "+o.Path]
		if !ok {
			continue
		}
		c.ops[op].Store(max(o.Seen, 0))
		for _, a := range o.Responses {
			n := max(a.Seen, 0)
			code := codeOf(a.Code)
			if i := m.response(op, a.Status, code); i >= 0 && !a.Undocumented {
				c.resp[i].Store(n)
				continue
			}
			if n == 0 {
				continue
			}
			k := undocKey{op, a.Status, code}
			if _, ok := c.undoc[k]; ok || len(c.undoc) < MaxUndocumented {
				if c.undoc == nil {
					c.undoc = map[undocKey]int64{}
				}
				c.undoc[k] += n
			} else {
				c.other += n
			}
		}
	}
	c.other += max(r.OtherUndocumented, 0)
	for _, t := range r.Transitions {
		if i, ok := m.trans[Transition{t.Resource, t.From, t.To, t.Via}]; ok {
			c.trans[i].Store(max(t.Seen, 0))
		}
	}
	for _, f := range r.Faults {
		if i, ok := m.faults[f.Action]; ok {
			c.faults[i].Store(max(f.Seen, 0))
		}
	}
}
