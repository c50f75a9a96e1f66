package fault

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The index offers, in order, exactly the faults whose matchers hold: on random worlds
// of random faults (their matches compiled as they are, valid or not: a scenario's
// fault is not checked again) and random requests, the faults the index's candidates
// hold for are those a walk of every fault holds for, in the same order.
func TestIndexIsAWalkOfEveryFault(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(34, 5))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	maps := func(vals ...map[string]string) map[string]string { return vals[rng.IntN(len(vals))] }
	randomMatch := func() Match {
		m := Match{
			Method:    pick("", "", "", "GET", "POST", "HEAD", "DELETE", "PUT", "BREW"),
			Service:   pick("", "", "hosting", "cipher", "edge", "other"),
			Path:      pick("", "", "", "*", "/v1/deployments", "/v1/deployments/*", "/v1/*/promote", "/v1/projects/*/domains", "/v1/deployments/dpl_1", "/v1/projects", "*/logs", "/x*y"),
			Operation: pick("", "", "", "getDeployment", "createDeployment", "listProjects", "decrypt", "promoteDeployment"),
			Host:      pick("", "", "", "a.test", "*.test", "*", "b.example.*"),
			Headers:   maps(nil, nil, map[string]string{"X-Run": "ci-*"}, map[string]string{"accept": "*"}, map[string]string{"X-Run": "*", "Accept": "*json"}, map[string]string{"X-Foo!": "a"}),
			Query:     maps(nil, nil, map[string]string{"page": "2"}, map[string]string{"page": "*"}, map[string]string{"q": "*", "page": "*"}),
			Token:     pick("", "", "", "t-1", "t-2"),
			Scope:     pick("", "", "read", "deploy"),
		}
		if rng.IntN(4) == 0 {
			m.Body = map[string]BodyValue{"target": `"production"`}
		}
		return m
	}
	randomRequest := func() Request {
		r := Request{
			Method:   pick("GET", "GET", "POST", "HEAD", "get", "DELETE", "PATCH", "BREW"),
			Service:  pick("hosting", "hosting", "cipher", "edge", "", "other"),
			Path:     pick("/v1/deployments", "/v1/deployments/dpl_1", "/v1/deployments/dpl_1/promote", "/v1/deployments/dpl_1/logs", "/v1/projects", "/v1/projects/p/domains", "/v1/decrypt", "/", "/x-y"),
			Host:     pick("", "", "a.test", "b.example.com", "c.test"),
			RawQuery: pick("", "page=2", "page=3", "p%61ge=2", "q=&page=1", "%zz"),
			Token:    pick("", "t-1", "t-2"),
			Scope:    pick("", "read", "deploy"),
			Body:     pick("", `{"target":"production"}`, `{"target":"preview"}`),
			Header:   map[string][]string{},
		}
		if rng.IntN(2) == 0 {
			r.Header["X-Run"] = []string{pick("ci-1", "dev")}
		}
		if rng.IntN(2) == 0 {
			r.Header["Accept"] = []string{pick("application/json", "text/html")}
		}
		if rng.IntN(4) == 0 {
			r.Header["X-Foo!"] = []string{"a"}
		}
		return r
	}
	for world := range 400 {
		n := 1 + rng.IntN(60)
		order := make([]*Fault, n)
		for i := range order {
			f := &Fault{ID: fmt.Sprint(i), Spec: Spec{Match: randomMatch()}}
			f.compile()
			order[i] = f
		}
		x := buildIndex(order)
		for range 50 {
			r := randomRequest()
			var walk, indexed, walkBody []int32
			for i := range x.ms {
				rr := r
				if x.ms[i].holds(&rr) {
					if bodyHolds(&x.ms[i], &rr) {
						walk = append(walk, int32(i))
					}
					if len(x.ms[i].body) > 0 {
						walkBody = append(walkBody, int32(i))
					}
				}
			}
			var c cursor
			rr := r
			if bs := x.bucketsOf(&rr, false); bs.candidates(&rr, &c) {
				for p := c.next(); p >= 0; p = c.next() {
					if m := &x.ms[p]; m.holds(&rr) && bodyHolds(m, &rr) {
						indexed = append(indexed, p)
					}
				}
			}
			if !slices.Equal(walk, indexed) {
				t.Fatalf("world %d, request %+v: a walk holds for %v, the index %v\nfaults: %v", world, r, walk, indexed, matches(order))
			}
			s := &Set{}
			s.idx.Store(x)
			if got := s.WantsBody(r); got != (len(walkBody) > 0) {
				t.Fatalf("world %d, request %+v: WantsBody %v, want %v (%v)", world, r, got, !got, walkBody)
			}
		}
	}
}

func matches(order []*Fault) []Match {
	out := make([]Match, len(order))
	for i, f := range order {
		out[i] = f.Spec.Match
	}
	return out
}

// A request that meets more candidate lists than a cursor merges walks its whole
// bucket, in order.
func TestIndexManyLists(t *testing.T) {
	t.Parallel()
	var order []*Fault
	h := map[string][]string{}
	for i := range 3 * maxLists {
		name := fmt.Sprintf("X-H%d", i)
		f := &Fault{Spec: Spec{Match: Match{Headers: map[string]string{name: "*"}, Query: map[string]string{"q": fmt.Sprint(i % 2)}}}}
		f.compile()
		order = append(order, f)
		h[name] = []string{"v"}
	}
	x := buildIndex(order)
	r := Request{Method: "GET", Path: "/", Header: h, RawQuery: "q=1"}
	var c cursor
	if bs := x.bucketsOf(&r, false); !bs.candidates(&r, &c) || c.n != 1 {
		t.Fatalf("%d lists, want the bucket's one", c.n)
	}
	var got []int32
	for p := c.next(); p >= 0; p = c.next() {
		if x.ms[p].holds(&r) {
			got = append(got, p)
		}
	}
	if len(got) != 3*maxLists/2 || got[0] != 1 || !slices.IsSorted(got) {
		t.Fatalf("%v", got)
	}
}

func TestIndexSlots(t *testing.T) {
	if len(Methods) != otherMethod || len(Services) != otherService {
		t.Fatalf("slots: %d methods and %d services, want %d and %d", len(Methods), len(Services), otherMethod, otherService)
	}
	for i, m := range Methods {
		if methodSlot(m) != i {
			t.Errorf("%s in slot %d", m, methodSlot(m))
		}
	}
	for i, s := range Services {
		if serviceSlot(s) != i {
			t.Errorf("%s in slot %d", s, serviceSlot(s))
		}
	}
}
