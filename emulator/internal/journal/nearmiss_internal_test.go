package journal

import (
	"math/rand/v2"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// A journal condition's near misses weigh an entry condition by condition with the
// meaning of the filter: none differs exactly when the filter selects the entry.
func TestNearMissAgreesWithFilter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(34, 4))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	parse := func(s string) *fault.BodyMatch {
		if s == "" {
			return nil
		}
		m, err := fault.ParseBodyMatch(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	header := func(s string) *HeaderMatch {
		if s == "" {
			return nil
		}
		m, err := ParseHeaderMatch(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	selected := 0
	for i := range 20000 {
		status := []int{0, 200, 503}[rng.IntN(3)]
		f := Filter{Method: pick("", "", "GET", "POST"), Path: pick("", "", "/v1/*", "/v1/projects"), Service: pick("", "", "hosting", "edge"),
			Scope: pick("", "", "read", "api_key"), Code: pick("", "", "rate_limited"), Body: parse(pick("", "", "target=production", "meta.n")),
			Header: header(pick("", "", "X-Run", "x-run:a*")), ResponseHeader: header(pick("", "", "Retry-After:3*"))}
		if rng.IntN(3) == 0 {
			f.Status = &status
		}
		e := Entry{Seq: uint64(i + 1), Method: pick("GET", "POST"), Path: pick("/v1/projects", "/v1/deployments", "/"), Service: pick("hosting", "edge"),
			Scope: pick("", "read", "api_key"), ErrorCode: pick("", "rate_limited"), Status: []int{200, 503}[rng.IntN(2)],
			Body: pick(`{"target":"production","meta":{"n":1}}`, `{"target":"preview"}`, "nope")}
		if rng.IntN(2) == 0 {
			e.Headers = Headers{{Name: "X-Run", Value: pick("a1", "b1")}}
		}
		if rng.IntN(2) == 0 {
			e.Response.Headers = Headers{{Name: "Retry-After", Value: pick("30", "7")}}
		}
		_, diff, _, _ := f.weigh(&e, f.Conditions())
		if f.matches(&e) != (diff == 0) {
			t.Fatalf("filter %+v, entry %+v: matches %v, near misses see %d conditions differ", f, e, f.matches(&e), diff)
		}
		if diff == 0 {
			selected++
		}
	}
	if selected < 200 {
		t.Fatalf("only %d entries selected: widen the pools", selected)
	}
}

// Near misses look at the newest NearMissWindow entries only, and copy no more.
func TestNearMissesLookAtTheNewestOnly(t *testing.T) {
	t.Parallel()
	j := New(5000)
	for range 3 * fault.NearMissWindow {
		j.Add(Entry{Method: "GET", Path: "/v1/projects", Service: "hosting"})
	}
	before := j.Evaluations()
	nms := j.NearMisses(Filter{Method: "POST"})
	if got := j.Evaluations() - before; got != fault.NearMissWindow {
		t.Errorf("near misses looked at %d entries, want %d", got, fault.NearMissWindow)
	}
	if len(nms) != fault.NearMissMax || nms[0].Seq != 3*fault.NearMissWindow || nms[4].Seq != 3*fault.NearMissWindow-4 {
		t.Errorf("near misses %+v: want the 5 newest", nms)
	}
	before = j.Evaluations()
	if c := j.Candidates(); len(c) != fault.NearMissWindow || c[0].Seq != 3*fault.NearMissWindow {
		t.Errorf("candidates: %d, newest %d", len(c), c[0].Seq)
	}
	if got := j.Evaluations() - before; got != fault.NearMissWindow {
		t.Errorf("candidates looked at %d entries, want %d", got, fault.NearMissWindow)
	}
	// since bounds them too
	if nms := j.NearMisses(Filter{Method: "POST", Since: 3*fault.NearMissWindow - 2}); len(nms) != 2 {
		t.Errorf("near misses after since: %+v", nms)
	}
}

// The journal keeps a token's fingerprint, never the token, and near misses read it.
func TestEntryKeepsNoToken(t *testing.T) {
	t.Parallel()
	j := New(10)
	e := Entry{Method: "GET", Path: "/v1/projects", Service: "hosting"}
	e.SetRequestHeaders(map[string][]string{"Authorization": {"Bearer secret-token-1"}})
	e.SetToken("secret-token-1")
	j.Add(e)
	c := j.Candidates()
	if len(c) != 1 || !c[0].TokenSent || c[0].TokenSum != fault.TokenSum("secret-token-1") || c[0].Header["Authorization"][0] != Redacted {
		t.Fatalf("candidate %+v", c[0])
	}
	if nms := (fault.Match{Token: "secret-token-2"}).NearMisses(c); len(nms) != 1 || *nms[0].Differs.Token != fault.RedactedToken {
		t.Errorf("near misses of another token: %+v", nms)
	}
	if nms := (fault.Match{Token: "secret-token-1", Method: "POST"}).NearMisses(c); len(nms) != 1 || nms[0].Differs.Token != nil {
		t.Errorf("near misses of the same token: %+v", nms)
	}
}
