package journal

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// Near misses of journal conditions (a query that found nothing, an await that timed
// out) and the candidates faults' near misses are weighed on: both look at the newest
// fault.NearMissWindow entries only, copied out of the lock (scan) and weighed outside
// it.

// SetToken gives e the request's bearer token: Add keeps its fingerprint
// (fault.TokenSum), never the token, for near misses of faults with match.token.
func (e *Entry) SetToken(token string) { e.tokenSum = fault.TokenSum(token) }

// recent copies the newest n entries whose Seq is after since, newest first.
func (j *Journal) recent(since uint64, n int) []Entry {
	j.mu.Lock()
	upto, epoch := j.seq, j.epoch
	if len(j.ring) > n {
		since = max(since, j.ring[(j.head+len(j.ring)-n)%len(j.ring)].Seq-1)
	}
	j.mu.Unlock()
	out := make([]Entry, 0, min(n, 64))
	j.scanEpoch(since, upto, epoch, func(e *Entry) bool {
		out = append(out, *e)
		return len(out) < n
	})
	for i, k := 0, len(out)-1; i < k; i, k = i+1, k-1 {
		out[i], out[k] = out[k], out[i]
	}
	return out
}

// Candidates are the newest fault.NearMissWindow entries, newest first, as faults'
// near misses weigh them. Entries of tunnels (CONNECT) are left out: no fault applies
// to them.
func (j *Journal) Candidates() []*fault.Candidate {
	entries := j.recent(0, fault.NearMissWindow)
	out := make([]*fault.Candidate, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.Method == "CONNECT" {
			continue
		}
		out = append(out, e.candidate())
	}
	return out
}

// candidate is e as faults see a request: its scope as faults match it ("" for a
// decryption key), its headers by canonical name.
func (e *Entry) candidate() *fault.Candidate {
	c := &fault.Candidate{Seq: e.Seq, ShownScope: e.Scope, TokenSum: e.tokenSum}
	c.Method, c.Path, c.Service, c.Host, c.RawQuery, c.Body = e.Method, e.Path, e.Service, e.Host, e.Query, e.Body
	if e.Scope != "api_key" {
		c.Scope = e.Scope
	}
	if len(e.Headers) > 0 {
		h := make(http.Header, len(e.Headers))
		for _, x := range e.Headers {
			name := http.CanonicalHeaderKey(x.Name)
			h[name] = []string{x.Value}
			if name == "Authorization" {
				c.TokenSent = true
			}
		}
		c.Header = h
	}
	return c
}

// NearMisses are the near misses of f among the newest fault.NearMissWindow entries
// after f.Since: the closest fault.NearMissMax entries that hold all but one or two of
// its conditions (method, path, status, service, scope, code, body, header,
// response_header), with what they had there (fault.Ranking's order). A filter of no
// condition has none.
func (j *Journal) NearMisses(f Filter) []fault.NearMiss {
	fields := f.Conditions()
	if fields == 0 {
		return []fault.NearMiss{}
	}
	var r fault.Ranking
	for _, e := range j.recent(f.Since, fault.NearMissWindow) {
		if d, diff, far, ok := f.weigh(&e, fields); ok {
			r.Offer(fault.NearMiss{Seq: e.Seq, Method: e.Method, Path: e.Path, Differs: d}, diff, far)
		}
	}
	return r.Result()
}

// Conditions counts the filter's conditions (Since and Limit are a range, not one).
func (f Filter) Conditions() int {
	n := 0
	for _, given := range []bool{f.Method != "", f.Path != "", f.Status != nil, f.Service != "", f.Scope != "",
		f.Code != "", f.Body != nil, f.Header != nil, f.ResponseHeader != nil} {
		if given {
			n++
		}
	}
	return n
}

// weigh compares e with f condition by condition, with matches' own judgement (failing): what differs, in
// how many conditions and how far. ok is false when e is no near miss: it matched,
// more than two conditions differ, or none held (but for a filter of one condition).
func (f Filter) weigh(e *Entry, fields int) (d fault.Differs, diff int, far float64, ok bool) {
	miss := func(x float64) bool { diff++; far += x; return diff > 2 }
	failing := f.failing(e)
	for _, c := range [...]struct {
		bit  uint
		note func()
		far  float64
	}{
		{condMethod, func() { d.Method = &e.Method }, 1},
		{condPath, func() { d.Path = &e.Path }, -1},
		{condStatus, func() { d.Status = &e.Status }, 1},
		{condService, func() { d.Service = &e.Service }, 1},
		{condScope, func() { d.Scope = &e.Scope }, 1},
		{condCode, func() { d.Code = &e.ErrorCode }, 1},
		{condHeader, func() { d.Header = f.Header.shown(e.Headers) }, 1},
		{condResponseHeader, func() { d.ResponseHeader = f.ResponseHeader.shown(e.Response.Headers) }, 1},
	} {
		if failing&c.bit == 0 {
			continue
		}
		c.note()
		if c.far < 0 {
			c.far = fault.Farness(f.Path, e.Path)
		}
		if miss(c.far) {
			return d, diff, far, false
		}
	}
	if f.Body != nil {
		doc, isJSON := fault.DecodeBody(e.Body)
		if !f.Body.HoldsIn(doc, isJSON) {
			d.Body = map[string]json.RawMessage{f.Body.Path(): f.Body.ValueIn(doc, isJSON)}
			if miss(1) {
				return d, diff, far, false
			}
		}
	}
	return d, diff, far, diff > 0 && (diff < fields || fields == 1)
}

// shown is what h has of the match's header: {name: value}, or {name: null} when h
// has no such header.
func (m *HeaderMatch) shown(h Headers) map[string]*string {
	if v, ok := h.Lookup(m.Name()); ok {
		return map[string]*string{m.Name(): &v}
	}
	return map[string]*string{m.Name(): nil}
}

// writeNearMisses writes `,"near_misses":[…]` into a query's answer that found
// nothing, when the query has a condition.
func (j *Journal) writeNearMisses(w io.Writer, f Filter) error {
	if f.Conditions() == 0 {
		return nil
	}
	b, err := json.Marshal(j.NearMisses(f))
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, `,"near_misses":`); err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
