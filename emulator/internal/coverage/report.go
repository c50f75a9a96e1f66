package coverage

import (
	"math"
	"sort"
)

// Report is coverage as the control API answers it (PRODUCT.md "Coverage of a test
// run").
type Report struct {
	Operations  []OperationReport  `json:"operations"`
	Transitions []TransitionReport `json:"transitions"`
	Faults      []FaultReport      `json:"faults"`
	Totals      Totals             `json:"totals"`
	// OtherUndocumented counts undocumented answers beyond MaxUndocumented distinct
	// ones, which are not listed apart.
	OtherUndocumented int64 `json:"other_undocumented,omitempty"`
}

// OperationReport is one operation and every answer it documents, seen or not.
type OperationReport struct {
	Method    string           `json:"method"`
	Path      string           `json:"path"`
	Seen      int64            `json:"seen"`
	Responses []ResponseReport `json:"responses"`
	// Ignored is why the operation, every answer of it included, is left out of the
	// totals (a coverage file's or --ignore's rule); "" when it counts.
	Ignored string `json:"ignored,omitempty"`
}

// ResponseReport is one answer: a documented one (seen or not), or one that was seen
// though the description does not document it for the operation (an injected fault's,
// say), marked undocumented and left out of the totals.
type ResponseReport struct {
	Status       int     `json:"status"`
	Code         *string `json:"code"` // null for a success
	Seen         int64   `json:"seen"`
	Undocumented bool    `json:"undocumented,omitempty"`
	// Ignored is why the answer is left out of the totals; "" when it counts.
	Ignored string `json:"ignored,omitempty"`
}

// TransitionReport is one lifecycle edge.
type TransitionReport struct {
	Resource string `json:"resource"`
	From     string `json:"from"`
	To       string `json:"to"`
	Via      string `json:"via,omitempty"`
	Seen     int64  `json:"seen"`
	// Ignored is why the edge is left out of the totals; "" when it counts.
	Ignored string `json:"ignored,omitempty"`
}

// FaultReport is how often injected faults fired with one action.
type FaultReport struct {
	Action string `json:"action"`
	Seen   int64  `json:"seen"`
}

// Totals are how much of each dimension was seen. Percent is over all three together:
// (operations + responses + transitions seen) / (their totals).
type Totals struct {
	Operations  Total   `json:"operations"`
	Responses   Total   `json:"responses"`
	Transitions Total   `json:"transitions"`
	Percent     float64 `json:"percent"`
	// Ignored counts the rows (operations, answers and edges) ignored, left out of
	// the figures above.
	Ignored int `json:"ignored,omitempty"`
}

// Total is one dimension's figures.
type Total struct {
	Seen    int     `json:"seen"`
	Total   int     `json:"total"`
	Percent float64 `json:"percent"`
}

func percent(seen, total int) float64 {
	if total == 0 {
		return 100
	}
	return math.Floor(float64(seen)*1000/float64(total)) / 10 // one decimal, never rounded up to a pass
}

func tally(seen, total int) Total { return Total{seen, total, percent(seen, total)} }

// Report reads the counters. Counting goes on meanwhile; each counter is read once.
func (c *Counter) Report() Report {
	m := c.m
	var r Report
	c.mu.Lock()
	undoc := make(map[int][]ResponseReport)
	for k, n := range c.undoc {
		code := k.code
		undoc[k.op] = append(undoc[k.op], ResponseReport{Status: k.status, Code: &code, Seen: n, Undocumented: true})
	}
	r.OtherUndocumented = c.other
	c.mu.Unlock()
	r.Operations = make([]OperationReport, len(m.Operations))
	for i, o := range m.Operations {
		or := OperationReport{Method: o.Method, Path: o.Path, Seen: c.ops[i].Load(), Responses: make([]ResponseReport, 0, len(o.Responses)+len(undoc[i]))}
		for j, resp := range o.Responses {
			rr := ResponseReport{Status: resp.Status, Seen: c.resp[o.resp+j].Load()}
			if resp.Code != "" {
				code := resp.Code
				rr.Code = &code
			}
			or.Responses = append(or.Responses, rr)
		}
		extra := undoc[i]
		sort.Slice(extra, func(a, b int) bool {
			if extra[a].Status != extra[b].Status {
				return extra[a].Status < extra[b].Status
			}
			return *extra[a].Code < *extra[b].Code
		})
		or.Responses = append(or.Responses, extra...)
		r.Operations[i] = or
	}
	r.Transitions = make([]TransitionReport, len(m.Transitions))
	for i, t := range m.Transitions {
		r.Transitions[i] = TransitionReport{Resource: t.Resource, From: t.From, To: t.To, Via: t.Via, Seen: c.trans[i].Load()}
	}
	r.Faults = make([]FaultReport, len(FaultActions))
	for i, a := range FaultActions {
		r.Faults[i] = FaultReport{Action: a, Seen: c.faults[i].Load()}
	}
	r.Totals = totalsOf(r) // the undocumented answers listed are not counted
	return r
}

// Merge adds reports up (the coverage of several emulators, or of one read at several
// moments of different worlds): counts of the same operation, answer, edge and fault
// action are summed, and the totals computed again. The reports need not come from one
// model: an operation or answer only one of them lists is kept as it is.
func Merge(rs ...Report) Report {
	out := Report{Operations: []OperationReport{}, Transitions: []TransitionReport{}, Faults: []FaultReport{}}
	opAt := map[string]int{}
	trAt := map[string]int{}
	fAt := map[string]int{}
	for _, r := range rs {
		out.OtherUndocumented += r.OtherUndocumented
		for _, o := range r.Operations {
			k := o.Method + " " + o.Path
			i, ok := opAt[k]
			if !ok {
				i = len(out.Operations)
				opAt[k] = i
				out.Operations = append(out.Operations, OperationReport{Method: o.Method, Path: o.Path, Responses: []ResponseReport{}})
			}
			dst := &out.Operations[i]
			dst.Seen += o.Seen
			if dst.Ignored == "" {
				dst.Ignored = o.Ignored
			}
			for _, a := range o.Responses {
				j := -1
				for x, b := range dst.Responses {
					if b.Status == a.Status && codeOf(b.Code) == codeOf(a.Code) && b.Undocumented == a.Undocumented {
						j = x
						break
					}
				}
				if j < 0 {
					c := a
					c.Seen = 0
					dst.Responses = append(dst.Responses, c)
					j = len(dst.Responses) - 1
				}
				dst.Responses[j].Seen += a.Seen
				if dst.Responses[j].Ignored == "" {
					dst.Responses[j].Ignored = a.Ignored
				}
			}
		}
		for _, t := range r.Transitions {
			k := t.Resource + " " + t.From + " " + t.To + " " + t.Via
			i, ok := trAt[k]
			if !ok {
				i = len(out.Transitions)
				trAt[k] = i
				c := t
				c.Seen = 0
				out.Transitions = append(out.Transitions, c)
			}
			out.Transitions[i].Seen += t.Seen
			if out.Transitions[i].Ignored == "" {
				out.Transitions[i].Ignored = t.Ignored
			}
		}
		for _, f := range r.Faults {
			i, ok := fAt[f.Action]
			if !ok {
				i = len(out.Faults)
				fAt[f.Action] = i
				out.Faults = append(out.Faults, FaultReport{Action: f.Action})
			}
			out.Faults[i].Seen += f.Seen
		}
	}
	out.Totals = totalsOf(out)
	return out
}

func codeOf(c *string) string {
	if c == nil {
		return ""
	}
	return *c
}

// totalsOf computes a report's totals from its lists.
func totalsOf(r Report) Totals {
	var ops, opsSeen, resp, respSeen, trans, transSeen, ignored int
	for _, o := range r.Operations {
		if o.Ignored != "" {
			ignored++
		} else {
			ops++
			if o.Seen > 0 {
				opsSeen++
			}
		}
		for _, a := range o.Responses {
			if a.Undocumented {
				continue
			}
			if a.Ignored != "" {
				ignored++
				continue
			}
			resp++
			if a.Seen > 0 {
				respSeen++
			}
		}
	}
	for _, t := range r.Transitions {
		if t.Ignored != "" {
			ignored++
			continue
		}
		trans++
		if t.Seen > 0 {
			transSeen++
		}
	}
	return Totals{
		Operations:  tally(opsSeen, ops),
		Responses:   tally(respSeen, resp),
		Transitions: tally(transSeen, trans),
		Percent:     percent(opsSeen+respSeen+transSeen, ops+resp+trans),
		Ignored:     ignored,
	}
}
