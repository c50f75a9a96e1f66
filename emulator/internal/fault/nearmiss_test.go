package fault_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	_ "github.com/hostemu/hostemu/emulator/internal/journal" // fault.ParseBody
)

// Near misses weigh a request field by field with the same meaning as the matcher the
// hot path uses: no field differs exactly when the fault fires. Random matches against
// random requests, from pools of values that do and do not match each other.
func TestNearMissAgreesWithMatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(34, 3))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	maybe := func(k, v string) map[string]string {
		if rng.IntN(2) == 0 {
			return nil
		}
		return map[string]string{k: v}
	}
	bodies := []map[string]fault.BodyValue{nil, {"target": `"production"`}, {"meta.n": `3`}, {"target": `"preview"`, "meta.n": "3"}}
	checked, fired := 0, 0
	for range 4000 {
		m := fault.Match{
			Method: pick("", "", "GET", "POST", "delete"), Path: pick("", "", "/v1/deployments", "/v1/deployments/*", "/v1/projects"),
			Service: pick("", "", "hosting", "edge"), Scope: pick("", "", "read", "admin"), Host: pick("", "", "", "shop.test", "*.TEST"),
			Operation: pick("", "", "", "createDeployment", "getDeployment", "listProjects"),
			Query:     maybe(pick("target", "status"), pick("prod*", "*")), Headers: maybe(pick("x-run", "X-Other"), pick("a*", "*", "a1")),
			Body: bodies[rng.IntN(len(bodies))], Token: pick("", "", "t1"),
		}
		s := fault.NewSet(nil)
		if _, err := s.Add(fault.Spec{Match: m, Status: 503}); err != nil {
			continue // a combination the API refuses
		}
		for range 20 {
			r := fault.Request{
				Method: pick("GET", "POST", "DELETE", "HEAD"), Path: pick("/v1/deployments", "/v1/deployments/dpl_1", "/v1/projects", "/"),
				Service: pick("hosting", "edge", "cipher"), Host: pick("", "shop.test", "blog.test"), Scope: pick("", "read", "admin"),
				RawQuery: pick("", "target=production", "status=x&target=preview"), Token: pick("", "t1", "t2"),
				Body: pick(`{"target":"production","meta":{"n":3}}`, `{"target":"preview","meta":{"n":3}}`, "not json"),
			}
			h := http.Header{}
			if rng.IntN(2) == 0 {
				h.Set("X-Run", pick("a1", "b1"))
				if rng.IntN(3) == 0 { // several values: both sides see them joined
					h.Add("X-Run", pick("a2", "b2"))
				}
			}
			r.Header = h
			c := &fault.Candidate{Request: r, Seq: 1, ShownScope: r.Scope, TokenSum: fault.TokenSum(r.Token), TokenSent: r.Token != ""}
			c.Request.Token = ""
			_, fires := s.Match(r)
			d, n := fault.Weigh(m, c)
			if fires != (n == 0) {
				b, _ := json.Marshal(d)
				t.Fatalf("match %+v, request %+v: fires %v, but near misses see %d fields differ (%s)", m, r, fires, n, b)
			}
			checked++
			if fires {
				fired++
			}
		}
	}
	if checked < 10000 || fired < 100 {
		t.Fatalf("only %d pairs checked, %d firing: widen the pools", checked, fired)
	}
}

func TestFarness(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want float64
	}{
		{"", "", 0}, {"/v1/x", "/v1/x", 0}, {"/v1/deployment", "/v1/deployments", 1.0 / 15}, {"abc", "", 1}, {"/a*", "/ab", 1.0 / 3},
	} {
		if got := fault.Farness(tt.a, tt.b); got != tt.want {
			t.Errorf("Farness(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// The ranking keeps the closest, in a total order, whatever the order offered.
func TestRankingKeepsTheClosest(t *testing.T) {
	t.Parallel()
	var r fault.Ranking
	for seq := uint64(1); seq <= 12; seq++ {
		r.Offer(fault.NearMiss{Seq: seq}, int(seq%2)+1, float64(seq%3))
	}
	var got []uint64
	for _, nm := range r.Result() {
		got = append(got, nm.Seq)
	}
	// diff 1: odd seqs... seq%2==0 → diff 1: 2,4,6,8,10,12 with far seq%3: 12→0, 6→0, 10→1, 4→1, 8→2, 2→2
	want := []uint64{12, 6, 10, 4, 8}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if (&fault.Ranking{}).Result() == nil {
		t.Error("an empty ranking is nil, not []")
	}
}

// BenchmarkNearMissesOfAListing is the work GET /_emulator/faults does for near misses
// at its bound: a fault with no hits weighed against the NearMissWindow newest requests
// (a listing of n such faults costs n times this).
func BenchmarkNearMissesOfAListing(b *testing.B) {
	cands := make([]*fault.Candidate, fault.NearMissWindow)
	for i := range cands {
		c := &fault.Candidate{Seq: uint64(fault.NearMissWindow - i), ShownScope: "deploy", TokenSum: fault.TokenSum("t-deploy"), TokenSent: true}
		c.Method, c.Path, c.Service, c.Scope, c.RawQuery = "POST", "/v1/deployments", "hosting", "deploy", "team=a"
		c.Header = http.Header{"X-Run": {"r1"}, "Content-Type": {"application/json"}}
		c.Body = `{"project_id":"prj_shop","target":"preview","files":{"index.html":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},"meta":{"branch":"main"}}`
		cands[i] = c
	}
	for _, tt := range []struct {
		name string
		m    fault.Match
	}{
		{"path", fault.Match{Method: "POST", Path: "/v1/deployments/*/promote"}},
		{"body", fault.Match{Operation: "createDeployment", Body: map[string]fault.BodyValue{"target": `"production"`, "meta.branch": `"main"`}}},
		{"every field", fault.Match{Method: "POST", Path: "/v1/deployments", Service: "hosting", Scope: "deploy", Operation: "createDeployment",
			Query: map[string]string{"team": "b"}, Headers: map[string]string{"X-Run": "r*"}, Body: map[string]fault.BodyValue{"target": `"production"`}, Token: "t-deploy"}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if len(tt.m.NearMisses(cands)) == 0 {
					b.Fatal("no near misses")
				}
			}
		})
	}
}

// A large body value is shown by its kind and size, not whole.
func TestShownValueIsBounded(t *testing.T) {
	t.Parallel()
	big := `{"a":"` + strings.Repeat("x", 300) + `"}`
	if got := string(fault.ShownValue(json.RawMessage(big))); got != `"[an object of 308 bytes]"` {
		t.Errorf("ShownValue of a big object: %s", got)
	}
	if got := string(fault.ShownValue(json.RawMessage(`"small"`))); got != `"small"` {
		t.Errorf("ShownValue of a small string: %s", got)
	}
	huge := strings.Repeat("/p", 400)
	long := fault.Summary([]fault.NearMiss{{Seq: 1, Method: "GET", Path: "/", Differs: fault.Differs{Path: &huge}}})
	if len(long) > 600 || !strings.HasSuffix(long, "…") {
		t.Errorf("a summary is not cut: %d bytes", len(long))
	}
}

// A header near miss shows the value the matcher compared (several values joined by
// ", "), under the name as the match writes it, or null when the header is absent.
func TestNearMissShowsTheHeaderCompared(t *testing.T) {
	t.Parallel()
	m := fault.Match{Method: "GET", Headers: map[string]string{"x-run": "a*"}}
	cand := func(seq uint64, h http.Header) *fault.Candidate {
		return &fault.Candidate{Request: fault.Request{Method: "GET", Path: "/v1/projects", Service: "hosting", Header: h}, Seq: seq}
	}
	nms := m.NearMisses([]*fault.Candidate{cand(2, http.Header{"X-Run": {"b1", "a1"}}), cand(1, nil)})
	if len(nms) != 2 {
		t.Fatalf("near misses %+v", nms)
	}
	byseq := map[uint64]map[string]*string{}
	for _, nm := range nms {
		byseq[nm.Seq] = nm.Differs.Headers
	}
	if v, ok := byseq[2]["x-run"]; !ok || v == nil || *v != "b1, a1" {
		t.Errorf("two values: %v", byseq[2])
	}
	if v, ok := byseq[1]["x-run"]; !ok || v != nil {
		t.Errorf("absent: %v", byseq[1])
	}
}

// A listed fault's near misses, weighed with the matcher it was compiled with when
// added, are its match's.
func TestListedFaultNearMissesAreItsMatchs(t *testing.T) {
	t.Parallel()
	m := fault.Match{Method: "POST", Path: "/v1/deployments", Headers: map[string]string{"X-Run": "a*"}, Body: map[string]fault.BodyValue{"target": `"production"`}}
	s := fault.NewSet(nil)
	if _, err := s.Add(fault.Spec{Match: m, Status: 503}); err != nil {
		t.Fatal(err)
	}
	var cands []*fault.Candidate
	for i, r := range []fault.Request{
		{Method: "POST", Path: "/v1/deployment", Service: "hosting", Body: `{"target":"production"}`, Header: http.Header{"X-Run": {"a1"}}},
		{Method: "GET", Path: "/v1/deployments", Service: "hosting", Body: `{"target":"preview"}`},
		{Method: "POST", Path: "/v1/deployments", Service: "hosting", Body: `{"target":"preview"}`, Header: http.Header{"X-Run": {"b"}}},
	} {
		cands = append(cands, &fault.Candidate{Request: r, Seq: uint64(3 - i)})
	}
	listed := s.List()
	got, _ := json.Marshal(listed[0].NearMisses(cands))
	want, _ := json.Marshal(m.NearMisses(cands))
	if string(got) != string(want) || string(want) == "[]" {
		t.Errorf("listed fault's near misses %s, its match's %s", got, want)
	}
}
