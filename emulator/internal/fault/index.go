package fault

import (
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// The index is where a request looks for the faults that could match it, so that a
// world of faults that do not match costs a request little (docs/performance.md: 100
// such faults, under 0.5 µs a GET). It never decides: a fault it offers is checked in
// full by its matcher, and the faults it leaves out are only ones whose matcher could
// not hold. Faults are offered in the order they are tried (API-added in the order
// added, then the scenario's), so the first that fires is the one a walk of every fault
// would fire.
//
// Each fault is filed once: in the bucket of its service (its own, or its operation's;
// or "any") and its method (likewise; a GET operation's is "GET or HEAD"), and within
// it under the most selective field it has, as its matcher compares it:
//
//	token          the request's token, looked up (keys)
//	path (no `*`)  the request's path, looked up
//	operation      its route's path, as a path: the template itself when it has no
//	               parameter, else its literal prefix and suffix (so the index never
//	               asks coverage's router which operation a request is; the matchers
//	               of the faults it offers do)
//	host (no `*`)  the request's host, looked up
//	headers        the presence of its first header (by name): one look per name
//	path glob      its literal prefix and suffix (affixIndex): one look per distinct
//	               length of the longer of the two, however many globs
//	host glob      the same, for the host
//	query          the presence of its first parameter: one look per name
//
// or, with none of them, as looked at by every request of its bucket. A request looks
// in the buckets of its service or any, and of its method or any (and "GET or HEAD"
// for either). An index is never changed once built: Set builds a new one whenever
// its faults change, in time linear in their number, and publishes it atomically, so
// matching reads it without a lock.
type index struct {
	order   []*Fault  // every fault, in the order tried
	ms      []matcher // their matchers, side by side
	buckets [numServiceSlots][numMethodSlots]*bucket
	bodies  int // faults with body matchers

	// look is, per service and method slot of a request, the buckets it looks in, and
	// lookBody those of them that hold a body fault.
	look, lookBody [otherService + 1][otherMethod + 1]buckets
}

// Service slots: each of Services, one for any other value (a fault's or a request's),
// and one for a fault with no service.
const (
	otherService    = 3
	anyService      = 4
	numServiceSlots = 5
)

func serviceSlot(s string) int {
	switch s {
	case "hosting":
		return 0
	case "cipher":
		return 1
	case "edge":
		return 2
	}
	return otherService
}

// Method slots: each of Methods, one for any other value, one for a GET operation's
// faults ("GET or HEAD"), and one for a fault with no method.
const (
	otherMethod    = 7
	getOrHead      = 8
	anyMethod      = 9
	numMethodSlots = 10
)

// The slots of the usual methods, found without a loop.
var getSlot, postSlot, headSlot = slices.Index(Methods, "GET"), slices.Index(Methods, "POST"), slices.Index(Methods, "HEAD")

// methodSlot is the slot of a method: matchers compare methods in any case.
func methodSlot(m string) int {
	switch m {
	case "GET":
		return getSlot
	case "POST":
		return postSlot
	}
	for i, k := range Methods {
		if strings.EqualFold(k, m) {
			return i
		}
	}
	return otherMethod
}

// bucket holds the faults of one service and method slot, each filed once: in generic
// or under one key.
type bucket struct {
	all     []int32 // every fault of the bucket, in order: walked when a request has more candidate lists than a cursor holds
	generic []int32
	token   keys
	path    keys
	host    keys
	header  []group // key: a header name
	query   []group // key: a query parameter
	pathFix affixIndex
	hostFix affixIndex
	body    bool // a fault of the bucket has a body matcher

	groups map[groupKey]int // while building: where each group is in its slice
}

// group is the faults filed under one key.
type group struct {
	key string
	at  []int32
}

type groupKey struct {
	kind int
	key  string
}

// keys finds the lists filed under a string: by comparing it with each key while they
// are few (a length compared, mostly), by a map once they are many.
type keys struct {
	few []keyed
	m   map[string]int // index in few, once it holds more than fewKeys
}

type keyed struct {
	key string
	at  []int32
}

// fewKeys is how many keys are compared one by one before a map finds them.
const fewKeys = 8

func (k *keys) file(key string, i int32) {
	if j, ok := k.find(key); ok {
		k.few[j].at = append(k.few[j].at, i)
		return
	}
	k.few = append(k.few, keyed{key, []int32{i}})
	switch {
	case k.m != nil:
		k.m[key] = len(k.few) - 1
	case len(k.few) > fewKeys:
		k.m = make(map[string]int, len(k.few))
		for j, x := range k.few {
			k.m[x.key] = j
		}
	}
}

func (k *keys) find(key string) (int, bool) {
	if k.m != nil {
		j, ok := k.m[key]
		return j, ok
	}
	for j := range k.few {
		if k.few[j].key == key {
			return j, true
		}
	}
	return 0, false
}

// get is the list filed under key (nil: none).
func (k *keys) get(key string) []int32 {
	if j, ok := k.find(key); ok {
		return k.few[j].at
	}
	return nil
}

// affixIndex files globs by their literal prefix and suffix (affixes): each under the
// longer of the two, so that a string looks up each distinct length of those it has
// (a handful, however many globs), then compares the other affix of the globs there.
type affixIndex struct {
	prefixes, suffixes affixTable
}

type affixTable struct {
	lens   []int // the distinct lengths of the keys, ascending
	by     keys  // key → position in groups
	groups [][]affixGroup
}

// affixGroup is the globs of one prefix and suffix.
type affixGroup struct {
	other string // the affix not looked up
	at    []int32
}

func (a *affixIndex) file(prefix, suffix string, i int32) {
	if len(prefix) >= len(suffix) {
		a.prefixes.file(prefix, suffix, i)
	} else {
		a.suffixes.file(suffix, prefix, i)
	}
}

func (t *affixTable) file(key, other string, i int32) {
	j, ok := t.by.find(key)
	if !ok {
		j = len(t.groups)
		t.groups = append(t.groups, nil)
		t.by.file(key, int32(j))
		if n, found := slices.BinarySearch(t.lens, len(key)); !found {
			t.lens = slices.Insert(t.lens, n, len(key))
		}
	}
	gs := t.groups[j]
	for g := range gs {
		if gs[g].other == other {
			gs[g].at = append(gs[g].at, i)
			return
		}
	}
	t.groups[j] = append(gs, affixGroup{other: other, at: []int32{i}})
}

// lookup is the groups filed under key.
func (t *affixTable) lookup(key string) []affixGroup {
	if j, ok := t.by.find(key); ok {
		return t.groups[j]
	}
	return nil
}

// candidates adds to c the globs' lists whose prefix and suffix s has.
func (a *affixIndex) candidates(s string, c *cursor) {
	for _, n := range a.prefixes.lens {
		if n > len(s) {
			break
		}
		for _, g := range a.prefixes.lookup(s[:n]) {
			if len(s) >= n+len(g.other) && strings.HasSuffix(s, g.other) {
				c.add(g.at)
			}
		}
	}
	for _, n := range a.suffixes.lens {
		if n > len(s) {
			break
		}
		for _, g := range a.suffixes.lookup(s[len(s)-n:]) {
			if len(s) >= n+len(g.other) && strings.HasPrefix(s, g.other) {
				c.add(g.at)
			}
		}
	}
}

// buildIndex files the faults, in the order they are tried.
func buildIndex(order []*Fault) *index {
	x := &index{order: order, ms: make([]matcher, len(order))}
	for i, f := range order {
		x.ms[i] = *f.m
		m := &x.ms[i]
		if len(m.body) > 0 {
			x.bodies++
		}
		si, mi := anyService, anyMethod
		if m.service != "" {
			si = serviceSlot(m.service)
		}
		switch {
		case m.method == "":
		case m.headOK:
			mi = getOrHead
		default:
			mi = methodSlot(m.method)
		}
		b := x.buckets[si][mi]
		if b == nil {
			b = &bucket{}
			x.buckets[si][mi] = b
		}
		b.file(m, int32(i))
	}
	for _, row := range x.buckets {
		for _, b := range row {
			if b != nil {
				b.groups = nil
			}
		}
	}
	x.lookUp()
	return x
}

// file adds the fault at position i, whose matcher is m, under its most selective key.
func (b *bucket) file(m *matcher, i int32) {
	b.all = append(b.all, i)
	b.body = b.body || len(m.body) > 0
	grouped := func(gs *[]group, kind int, k string) {
		if b.groups == nil {
			b.groups = map[groupKey]int{}
		}
		gk := groupKey{kind, k}
		if j, ok := b.groups[gk]; ok {
			(*gs)[j].at = append((*gs)[j].at, i)
			return
		}
		b.groups[gk] = len(*gs)
		*gs = append(*gs, group{key: k, at: []int32{i}})
	}
	switch {
	case m.token != "":
		b.token.file(m.token, i)
	case m.path != "" && !strings.Contains(m.path, "*"):
		b.path.file(m.path, i)
	case m.op >= 0:
		// a path of its route: its template when it has no parameter, else between
		// the template's literal prefix and suffix
		t := coverage.Default().Operations[m.op].Path
		first, last := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}')
		if first < 0 {
			b.path.file(t, i)
		} else {
			b.pathFix.file(t[:first], t[last+1:], i)
		}
	case m.host != "" && !strings.Contains(m.host, "*"):
		b.host.file(m.host, i)
	case len(m.headers) > 0:
		grouped(&b.header, 0, m.headers[0].Name())
	case affixed(m.path):
		p, s := affixes(m.path)
		b.pathFix.file(p, s, i)
	case affixed(m.host):
		p, s := affixes(m.host)
		b.hostFix.file(p, s, i)
	case len(m.query) > 0:
		grouped(&b.query, 1, m.query[0][0])
	default:
		b.generic = append(b.generic, i)
	}
}

// affixed reports whether a glob has a literal prefix or suffix to file it under.
func affixed(glob string) bool {
	p, s := affixes(glob)
	return p != "" || s != ""
}

// affixes are a glob's literal prefix, before its first `*`, and suffix, after its
// last: every string it matches has both (PathMatch compares them first).
func affixes(glob string) (prefix, suffix string) {
	first, last := strings.IndexByte(glob, '*'), strings.LastIndexByte(glob, '*')
	if first < 0 {
		return glob, ""
	}
	return glob[:first], glob[last+1:]
}

// maxLists is how many candidate lists a cursor merges; a request that meets more
// (many distinct header names, path globs or parameters) walks its buckets whole.
const maxLists = 16

// cursor merges a request's candidate lists, each in order, into one in order: the
// positions of the faults to check, smallest first. It lives on the stack.
type cursor struct {
	lists [maxLists][]int32
	n     int
	full  bool // a list did not fit
}

func (c *cursor) add(l []int32) {
	switch {
	case len(l) == 0:
	case c.n == maxLists:
		c.full = true
	default:
		c.lists[c.n] = l
		c.n++
	}
}

// next is the smallest position left, or -1.
func (c *cursor) next() int32 {
	best := -1
	for i := range c.n {
		if len(c.lists[i]) > 0 && (best < 0 || c.lists[i][0] < c.lists[best][0]) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	p := c.lists[best][0]
	c.lists[best] = c.lists[best][1:]
	return p
}

// buckets are the buckets r looks in: those of its service or any, and of its method
// or any (and "GET or HEAD" for either); forBody keeps to those that hold a body fault.
type buckets struct {
	b [6]*bucket
	n int
}

func (x *index) bucketsOf(r *Request, forBody bool) *buckets {
	si, mi := serviceSlot(r.Service), methodSlot(r.Method)
	if forBody {
		return &x.lookBody[si][mi]
	}
	return &x.look[si][mi]
}

// lookUp fills look and lookBody, once the faults are filed.
func (x *index) lookUp() {
	for si := range otherService + 1 {
		for mi := range otherMethod + 1 {
			ms := [3]int{mi, anyMethod, -1}
			if mi == getSlot || mi == headSlot {
				ms[2] = getOrHead
			}
			for _, s := range [2]int{si, anyService} {
				for _, m := range ms {
					if m < 0 {
						continue
					}
					if b := x.buckets[s][m]; b != nil {
						look := &x.look[si][mi]
						look.b[look.n] = b
						look.n++
						if b.body {
							body := &x.lookBody[si][mi]
							body.b[body.n] = b
							body.n++
						}
					}
				}
			}
		}
	}
}

// candidates fills c with the positions, in bs, of the faults that could match r (r's
// query is parsed here when a key needs it, and kept in r for the matchers). It reports
// false when no fault could.
func (bs *buckets) candidates(r *Request, c *cursor) bool {
	for _, b := range bs.b[:bs.n] {
		b.candidates(r, c)
	}
	if c.full { // too many lists: the buckets whole
		*c = cursor{}
		for _, b := range bs.b[:bs.n] {
			c.add(b.all)
		}
	}
	return c.n > 0
}

// candidates adds to c the lists of b's faults that could match r.
func (b *bucket) candidates(r *Request, c *cursor) {
	c.add(b.generic)
	if r.Token != "" {
		c.add(b.token.get(r.Token))
	}
	c.add(b.path.get(r.Path))
	if r.Host != "" {
		c.add(b.host.get(r.Host))
	}
	for i := range b.header {
		if g := &b.header[i]; len(r.Header[g.key]) > 0 {
			c.add(g.at)
		}
	}
	b.pathFix.candidates(r.Path, c)
	if r.Host != "" {
		b.hostFix.candidates(r.Host, c)
	}
	if len(b.query) > 0 {
		q := r.parsedQuery()
		for i := range b.query {
			if g := &b.query[i]; len(q[g.key]) > 0 {
				c.add(g.at)
			}
		}
	}
}
