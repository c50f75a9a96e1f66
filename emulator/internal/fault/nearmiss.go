package fault

import (
	"encoding/json"
	"hash/maphash"
	"io"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
)

// Near misses say what almost matched when nothing did: for a fault that never fired,
// an await that timed out or a journal query that found nothing, the recent journaled
// requests that held all but one or two of the condition's fields, each with what it
// had in the fields that differed.
const (
	// NearMissMax is how many near misses a fault or a condition is given at most.
	NearMissMax = 5
	// NearMissWindow is how many of the newest journaled requests are looked at: the
	// work of a listing is bounded by the faults with no hits times this.
	NearMissWindow = 200
	// RedactedToken stands for a token in a near miss: the token is never written.
	RedactedToken = "[redacted]"
	// MaxShownValue bounds, in bytes of JSON, a body value a near miss shows; a larger
	// one is shown as a string saying its kind and size (ShownValue).
	MaxShownValue = 256
	// maxSummaryDiffers bounds, in bytes, what a message's summary writes of one near
	// miss's differs.
	maxSummaryDiffers = 512
)

// ShownValue is the JSON of a body value as a near miss shows it: as it is up to
// MaxShownValue bytes, else a string such as "[an object of 3100 bytes]".
func ShownValue(b json.RawMessage) json.RawMessage {
	if len(b) <= MaxShownValue {
		return b
	}
	kind := "a value"
	switch b[0] {
	case '{':
		kind = "an object"
	case '[':
		kind = "an array"
	case '"':
		kind = "a string"
	}
	out, _ := json.Marshal("[" + kind + " of " + strconv.Itoa(len(b)) + " bytes]")
	return out
}

// NearMiss is a journaled request that held all but one or two fields of a condition.
type NearMiss struct {
	Seq     uint64  `json:"seq"`
	Method  string  `json:"method"`
	Path    string  `json:"path"`
	Differs Differs `json:"differs"`
}

// Differs holds, for each field of a condition a near miss did not meet, what the
// request had there: a string field its value ("" when the request had none: no scope,
// no operation); query, headers (and a journal query's header and response_header)
// each name that failed with the request's value, or null when it was absent; body
// each JSON path that failed with the request's value there (JSON), or null when the
// path is not there or the body is not JSON; token "[redacted]" when the request had
// another token, "" when none. status and code are a journal query's.
type Differs struct {
	Method         *string                    `json:"method,omitempty"`
	Path           *string                    `json:"path,omitempty"`
	Service        *string                    `json:"service,omitempty"`
	Scope          *string                    `json:"scope,omitempty"`
	Host           *string                    `json:"host,omitempty"`
	Operation      *string                    `json:"operation,omitempty"`
	Status         *int                       `json:"status,omitempty"`
	Code           *string                    `json:"code,omitempty"`
	Query          map[string]*string         `json:"query,omitempty"`
	Headers        map[string]*string         `json:"headers,omitempty"`
	Header         map[string]*string         `json:"header,omitempty"`
	ResponseHeader map[string]*string         `json:"response_header,omitempty"`
	Body           map[string]json.RawMessage `json:"body,omitempty"`
	Token          *string                    `json:"token,omitempty"`
}

// Candidate is a journaled request as near misses weigh it: what faults match on
// (Request, its Token left empty: the journal keeps no token, only TokenSum) and what
// the journal shows.
type Candidate struct {
	Request
	Seq uint64
	// ShownScope is the scope as the journal shows it ("api_key" for a decryption
	// request with its key; Request.Scope is then "", as faults see it).
	ShownScope string
	// TokenSum is TokenSum of the request's bearer token (0: none, or unknown);
	// TokenSent says an Authorization header was sent.
	TokenSum  uint64
	TokenSent bool
}

var tokenSeed = maphash.MakeSeed()

// TokenSum is a token's fingerprint for near misses (0 for no token): the journal keeps
// it in place of the token, which it never holds. It is of this process only.
func TokenSum(token string) uint64 {
	if token == "" {
		return 0
	}
	return maphash.String(tokenSeed, token) | 1
}

// DecodeBody decodes a JSON body as body matchers read it (numbers as written).
func DecodeBody(body string) (any, bool) { return decodeJSON(body, false) }

// decodeJSON is the JSON value s begins with (numbers as json.Number), and whether
// there is one; whole asks that s be that value alone ("3 x" is none).
func decodeJSON(s string, whole bool) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || whole && dec.Decode(new(any)) != io.EOF {
		return nil, false
	}
	return v, true
}

// nearMatch is a fault's match ready to weigh candidates field by field.
type nearMatch struct {
	m      Match
	c      *matcher // the fault's compiled match: one matcher
	header []string // names as written, sorted (c.headers' order)
	fields int      // how many fields the match gives
	token  uint64
}

// prepare readies m, whose compiled matcher is c (nil: compiled here), for near misses.
func prepare(m Match, c *matcher) *nearMatch {
	n := &nearMatch{m: m, c: c, header: sortedKeys(m.Headers), token: TokenSum(m.Token)}
	// the fault's own compiled matcher: near misses weigh each field with its predicates
	// (a match in a fault was compiled without problems when it was added)
	if n.c == nil {
		n.c, _ = compile(m)
	}
	for _, given := range []bool{m.Method != "", m.Path != "", m.Service != "", m.Scope != "", m.Host != "",
		m.Operation != "", len(m.Query) > 0, len(m.Headers) > 0, len(m.Body) > 0, m.Token != ""} {
		if given {
			n.fields++
		}
	}
	return n
}

// NearMisses weighs cands (the newest journaled requests, newest first) against m and
// returns the closest NearMissMax near misses (see Ranking).
func (m Match) NearMisses(cands []*Candidate) []NearMiss { return prepare(m, nil).nearMisses(cands) }

// NearMisses is the near misses of the fault's match, weighed with the matcher the
// fault was compiled with when it was added (a listing compiles none again).
func (f *Fault) NearMisses(cands []*Candidate) []NearMiss {
	return prepare(f.Spec.Match, f.m).nearMisses(cands)
}

func (n *nearMatch) nearMisses(cands []*Candidate) []NearMiss {
	var r Ranking
	for _, c := range cands {
		if d, diff, far, ok := n.weigh(c); ok {
			r.Offer(NearMiss{Seq: c.Seq, Method: c.Method, Path: c.Path, Differs: d}, diff, far)
		}
	}
	return r.Result()
}

// weigh compares c with the match field by field: what differs, in how many fields and
// how far (Farness of a path or host, 1 for another field). ok is false when c is no
// near miss: it matched, more than two fields differ, or none held (but for a match of
// one field).
func (n *nearMatch) weigh(c *Candidate) (d Differs, diff int, far float64, ok bool) {
	m := &n.m
	miss := func(f float64) bool { diff++; far += f; return diff > 2 }
	if m.Method != "" && !n.c.methodHolds(c.Method) {
		d.Method = &c.Method
		if miss(1) {
			return d, diff, far, false
		}
	}
	if m.Path != "" && !n.c.pathHolds(c.Path) {
		d.Path = &c.Path
		if miss(Farness(m.Path, c.Path)) {
			return d, diff, far, false
		}
	}
	if m.Service != "" && m.Service != c.Service {
		d.Service = &c.Service
		if miss(1) {
			return d, diff, far, false
		}
	}
	if m.Scope != "" && m.Scope != c.Scope {
		d.Scope = &c.ShownScope
		if miss(1) {
			return d, diff, far, false
		}
	}
	if m.Host != "" && !n.c.hostHolds(c.Host) {
		d.Host = &c.Host
		if miss(Farness(n.c.host, c.Host)) {
			return d, diff, far, false
		}
	}
	if m.Operation != "" && (n.c.op < 0 || opOf(c.Method, c.Path, c.Service) != n.c.op) {
		id := OperationOf(c.Method, c.Path, c.Service)
		d.Operation = &id
		if miss(1) {
			return d, diff, far, false
		}
	}
	if len(n.c.query) > 0 {
		query := c.parsedQuery()
		for i, q := range n.c.query {
			if n.c.queryHolds(i, query) {
				continue
			}
			if d.Query == nil {
				d.Query = map[string]*string{}
			}
			d.Query[q[0]] = first(query[q[0]])
		}
		if d.Query != nil && miss(1) {
			return d, diff, far, false
		}
	}
	// headers: compiled in the order of their names as written, which name them here
	for i, h := range n.c.headers {
		v, there := h.valueIn(c.Header)
		if there && h.Value(v) {
			continue
		}
		if d.Headers == nil {
			d.Headers = map[string]*string{}
		}
		d.Headers[n.header[i]] = nil
		if there {
			d.Headers[n.header[i]] = &v // the value the matcher compared
		}
	}
	if d.Headers != nil && miss(1) {
		return d, diff, far, false
	}
	for _, b := range n.c.body { // compiled in the order of their paths
		held, val := bodyCheck(b, c)
		if held {
			continue
		}
		if d.Body == nil {
			d.Body = map[string]json.RawMessage{}
		}
		d.Body[b.Path()] = val
	}
	if d.Body != nil && miss(1) {
		return d, diff, far, false
	}
	if m.Token != "" && (c.TokenSum == 0 || c.TokenSum != n.token) {
		shown := ""
		if c.TokenSent {
			shown = RedactedToken
		}
		d.Token = &shown
		if miss(1) {
			return d, diff, far, false
		}
	}
	return d, diff, far, diff > 0 && (diff < n.fields || n.fields == 1)
}

// bodyCheck is whether a body matcher holds for c, and when not the value c's body has
// at its path (nil: none, or not JSON).
func bodyCheck(bm *BodyMatch, c *Candidate) (bool, json.RawMessage) {
	doc, isJSON := c.Doc()
	if bm.HoldsIn(doc, isJSON) {
		return true, nil
	}
	return false, bm.ValueIn(doc, isJSON)
}

func first(v []string) *string {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// opOf is the index in coverage.Default() of the operation of a request (method, path,
// service) as the coverage model's router finds it (HEAD as GET), or -1.
func opOf(method, path, service string) int {
	model := coverage.Default()
	i := model.Op(method, "", path)
	if i < 0 || model.Operations[i].Service != service {
		return -1
	}
	return i
}

// OperationOf is the operationId of the request (method, path, service), or "" when it
// is no operation of the emulated APIs.
func OperationOf(method, path, service string) string {
	if i := opOf(method, path, service); i >= 0 {
		return coverage.Default().Operations[i].ID
	}
	return ""
}

// Farness says how far a value is from a pattern (or another value), from 0 to 1: the
// share of the longer of the two that their common prefix and common suffix leave
// uncovered. It is linear in their lengths and allocates nothing.
func Farness(pattern, value string) float64 {
	n := max(len(pattern), len(value))
	if n == 0 {
		return 0
	}
	short := min(len(pattern), len(value))
	pre := 0
	for pre < short && pattern[pre] == value[pre] && pattern[pre] != '*' {
		pre++
	}
	suf := 0
	for suf < short-pre && pattern[len(pattern)-1-suf] == value[len(value)-1-suf] && pattern[len(pattern)-1-suf] != '*' {
		suf++
	}
	return float64(n-pre-suf) / float64(n)
}

// Ranking keeps the NearMissMax closest near misses offered: fewer fields differing
// first, then nearer (the sum of the fields' farness: a path or host by Farness, any
// other field 1), then the most recent (greater seq). It allocates nothing until
// Result.
type Ranking struct {
	best [NearMissMax]ranked
	n    int
}

type ranked struct {
	nm   NearMiss
	diff int
	far  float64
}

func (a ranked) before(b ranked) bool {
	if a.diff != b.diff {
		return a.diff < b.diff
	}
	if a.far != b.far {
		return a.far < b.far
	}
	return a.nm.Seq > b.nm.Seq
}

// Offer weighs one near miss, which differs in diff fields with farness far.
func (r *Ranking) Offer(nm NearMiss, diff int, far float64) {
	x := ranked{nm, diff, far}
	if r.n == len(r.best) {
		if !x.before(r.best[r.n-1]) {
			return
		}
		r.n--
	}
	i := r.n
	for i > 0 && x.before(r.best[i-1]) {
		r.best[i] = r.best[i-1]
		i--
	}
	r.best[i] = x
	r.n++
}

// Result is the near misses kept, closest first (an empty slice, not nil, for none).
func (r *Ranking) Result() []NearMiss {
	out := make([]NearMiss, r.n)
	for i := range out {
		out[i] = r.best[i].nm
	}
	return out
}

// Summary writes near misses for a message: "seq 12 POST /v1/deployments differs in
// {"path":"/v1/deployments"}", joined by "; " (each differs cut at 512 bytes).
func Summary(nms []NearMiss) string {
	parts := make([]string, 0, len(nms))
	for _, nm := range nms {
		b, _ := json.Marshal(nm.Differs)
		if len(b) > maxSummaryDiffers {
			n := utf8cut.At(b, maxSummaryDiffers) // not inside a character
			b = append(b[:n:n], "…"...)
		}
		parts = append(parts, "seq "+strconv.FormatUint(nm.Seq, 10)+" "+nm.Method+" "+nm.Path+" differs in "+string(b))
	}
	return strings.Join(parts, "; ")
}
