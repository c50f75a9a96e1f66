package fault_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func prob(p float64) *float64 { return &p }

func mustAdd(t *testing.T, s *fault.Set, spec fault.Spec) fault.Fault {
	t.Helper()
	f, err := s.Add(spec)
	if err != nil {
		t.Fatalf("Add(%+v): %v", spec, err)
	}
	return f
}

var post = fault.Request{Method: "POST", Path: "/v1/deployments", Service: "hosting", Scope: "deploy"}

func TestMatchFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		match fault.Match
		req   fault.Request
		want  bool
	}{
		{"empty match: every request", fault.Match{}, post, true},
		{"empty match: unauthenticated", fault.Match{}, fault.Request{Method: "GET", Path: "/x"}, true},
		{"method", fault.Match{Method: "POST"}, post, true},
		{"method case-insensitive", fault.Match{Method: "POST"}, fault.Request{Method: "post", Path: "/"}, true},
		{"other method", fault.Match{Method: "GET"}, post, false},
		{"exact path", fault.Match{Path: "/v1/deployments"}, post, true},
		{"path prefix is not enough", fault.Match{Path: "/v1/deploy", Service: "edge"}, fault.Request{Method: "POST", Path: "/v1/deployments", Service: "edge"}, false},
		{"path glob across slashes", fault.Match{Path: "/v1/*"}, fault.Request{Path: "/v1/deployments/dpl_1/promote"}, true},
		{"path glob anchored", fault.Match{Path: "/v1/*/promote"}, fault.Request{Path: "/v1/deployments/dpl_1"}, false},
		{"service", fault.Match{Service: "hosting"}, post, true},
		{"other service", fault.Match{Service: "cipher"}, post, false},
		{"scope", fault.Match{Scope: "deploy"}, post, true},
		{"other scope", fault.Match{Scope: "admin"}, post, false},
		{"scope needs a caller with it", fault.Match{Scope: "read"}, fault.Request{Method: "GET", Path: "/v1/deployments"}, false},
		{"all fields", fault.Match{Method: "POST", Path: "/v1/deployments*", Service: "hosting", Scope: "deploy"}, post, true},
		{"all fields but one", fault.Match{Method: "POST", Path: "/v1/deployments*", Service: "hosting", Scope: "read"}, post, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := fault.NewSet(seeded())
			f := mustAdd(t, s, fault.Spec{Match: tt.match, Status: 503})
			a, ok := s.Match(tt.req)
			if ok != tt.want {
				t.Fatalf("Match = %v, want %v", ok, tt.want)
			}
			if ok && (a.FaultID != f.ID || a.Status != 503) {
				t.Errorf("action %+v", a)
			}
		})
	}
}

func TestAction(t *testing.T) {
	t.Parallel()
	fixed := &fault.Delay{Min: 750 * time.Millisecond, Max: 750 * time.Millisecond}
	tests := []struct {
		spec fault.Spec
		want fault.Action
	}{
		{
			fault.Spec{Status: 503, Code: "busy", Message: "injected", Delay: fixed},
			fault.Action{FaultID: "flt_1", Hits: 1, Status: 503, Code: "busy", Message: "injected", Delay: 750 * time.Millisecond},
		},
		{fault.Spec{Status: 503}, fault.Action{FaultID: "flt_1", Hits: 1, Status: 503}}, // the HTTP layer fills the code in
		{fault.Spec{Delay: fixed}, fault.Action{FaultID: "flt_1", Hits: 1, Delay: 750 * time.Millisecond}},
		{fault.Spec{Drop: true}, fault.Action{FaultID: "flt_1", Hits: 1, Drop: true}},
		{fault.Spec{RateLimit: true, Delay: fixed}, fault.Action{FaultID: "flt_1", Hits: 1, RateLimit: true, Delay: 750 * time.Millisecond}},
		{fault.Spec{Timeout: true}, fault.Action{FaultID: "flt_1", Hits: 1, Timeout: true}},
	}
	for _, tt := range tests {
		s := fault.NewSet(seeded())
		mustAdd(t, s, tt.spec)
		if a, ok := s.Match(post); !ok || a != tt.want {
			t.Errorf("spec %+v: Match = %+v, %v; want %+v", tt.spec, a, ok, tt.want)
		}
	}
}

func TestTimes(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	mustAdd(t, s, fault.Spec{Status: 500, Times: 2})
	mustAdd(t, s, fault.Spec{Status: 502})
	var got []int
	for range 4 {
		a, _ := s.Match(post)
		got = append(got, a.Status)
	}
	if want := []int{500, 500, 502, 502}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if l := s.List(); l[0].Hits != 2 || l[1].Hits != 2 {
		t.Errorf("hits %d and %d, want 2 and 2", l[0].Hits, l[1].Hits)
	}
}

func TestProbability(t *testing.T) {
	t.Parallel()
	const n = 10_000
	tests := []struct {
		name   string
		p      *float64
		lo, hi int64
	}{
		{"absent: always", nil, n, n},
		{"1: always", prob(1), n, n},
		{"0: never", prob(0), 0, 0},
		{"0.3: about 3 in 10", prob(0.3), 2800, 3200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := func() (int64, []bool) {
				s := fault.NewSet(seeded())
				mustAdd(t, s, fault.Spec{Status: 503, Probability: tt.p})
				fired := make([]bool, n)
				for i := range n {
					_, fired[i] = s.Match(post)
				}
				return s.List()[0].Hits, fired
			}
			hits, first := run()
			if hits < tt.lo || hits > tt.hi {
				t.Errorf("%d hits in %d, want %d to %d", hits, n, tt.lo, tt.hi)
			}
			if _, second := run(); !slices.Equal(first, second) {
				t.Error("the same seed fired a different sequence")
			}
		})
	}
}

func TestFaultNotFiringPassesOn(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	mustAdd(t, s, fault.Spec{Status: 500, Probability: prob(0)})
	mustAdd(t, s, fault.Spec{Match: fault.Match{Method: "GET"}, Status: 501})
	mustAdd(t, s, fault.Spec{Status: 502})
	if a, _ := s.Match(post); a.FaultID != "flt_3" {
		t.Errorf("fired %q, want flt_3", a.FaultID)
	}
}

func TestOrderAndList(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	s.SetScenarioFaults("flaky", []fault.Spec{{Status: 500}, {Status: 501}})
	if a, _ := s.Match(post); a.FaultID != "scn_flaky_1" || a.Status != 500 {
		t.Fatalf("scenario fault: %+v", a)
	}
	mustAdd(t, s, fault.Spec{Status: 502, Probability: prob(0)})
	mustAdd(t, s, fault.Spec{Status: 503})
	if a, _ := s.Match(post); a.FaultID != "flt_2" {
		t.Fatalf("API-added faults come first: %+v", a)
	}
	got := s.List()
	want := []fault.Fault{
		{ID: "flt_1", Spec: fault.Spec{Status: 502, Probability: prob(0)}, Source: "api"},
		{ID: "flt_2", Spec: fault.Spec{Status: 503}, Source: "api", Hits: 1},
		{ID: "scn_flaky_1", Spec: fault.Spec{Status: 500}, Source: "scenario:flaky", Hits: 1},
		{ID: "scn_flaky_2", Spec: fault.Spec{Status: 501}, Source: "scenario:flaky"},
	}
	if !jsonEqual(t, got, want) {
		t.Fatalf("List:\n got %s\nwant %s", js(t, got), js(t, want))
	}

	if s.Remove("scn_flaky_1") || s.Remove("flt_9") {
		t.Error("removed a scenario fault or an unknown one")
	}
	if !s.Remove("flt_1") || s.Remove("flt_1") {
		t.Error("Remove(flt_1) twice: want true then false")
	}
	if f := mustAdd(t, s, fault.Spec{Drop: true}); f.ID != "flt_3" || f.Source != "api" || f.Hits != 0 {
		t.Errorf("ids are not reused: %+v", f)
	}
	s.Clear()
	if l := s.List(); len(l) != 2 || l[0].ID != "scn_flaky_1" {
		t.Errorf("Clear keeps the scenario's faults only: %+v", l)
	}
	s.SetScenarioFaults("other", []fault.Spec{{Status: 504}})
	if l := s.List(); len(l) != 1 || l[0].ID != "scn_other_1" || l[0].Hits != 0 {
		t.Errorf("SetScenarioFaults replaces: %+v", l)
	}
	s.SetScenarioFaults("default", nil)
	if _, ok := s.Match(post); ok || len(s.List()) != 0 {
		t.Error("no faults left, yet one fired or is listed")
	}
}

func TestAddValidates(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	if _, err := s.Add(fault.Spec{Status: 200}); err == nil || !strings.Contains(err.Error(), "status 200") {
		t.Fatalf("Add(status 200): %v", err)
	}
	if _, err := s.Add(fault.Spec{}); err == nil {
		t.Fatal("Add of a fault without an action succeeded")
	}
	if _, err := s.Add(fault.Spec{Status: 503, Match: fault.Match{Scope: "owner"}}); err == nil || !strings.Contains(err.Error(), `match.scope "owner"`) {
		t.Fatalf("Add(scope owner): %v", err)
	}
	if _, err := s.Add(fault.Spec{Status: 503, Match: fault.Match{Scope: "reed"}}); err == nil || !strings.Contains(err.Error(), `match.scope "reed": not a token scope (did you mean "read"?)`) {
		t.Fatalf("Add(scope reed): %v", err)
	}
	// An unknown method names the closest known one (issue 25 item 7: PSOT was accepted).
	if _, err := s.Add(fault.Spec{Status: 503, Match: fault.Match{Method: "PSOT"}}); err == nil || !strings.Contains(err.Error(), `match.method "PSOT": unknown method (did you mean "POST"?)`) {
		t.Fatalf("Add(method PSOT): %v", err)
	}
	if _, err := s.Add(fault.Spec{Status: 503, Match: fault.Match{Method: "BREW"}}); err == nil || !strings.Contains(err.Error(), "want DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT") {
		t.Fatalf("Add(method BREW): %v", err)
	}
	if len(s.List()) != 0 {
		t.Fatal("an invalid fault was added")
	}
	if f := mustAdd(t, s, fault.Spec{Drop: true}); f.ID != "flt_1" {
		t.Errorf("a refused fault used an id: %s", f.ID)
	}
	for _, scope := range []string{"read", "deploy", "admin"} {
		mustAdd(t, s, fault.Spec{Drop: true, Match: fault.Match{Scope: scope}})
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	s.SetScenarioFaults("flaky", []fault.Spec{{Status: 500, Match: fault.Match{Method: "GET"}}})
	mustAdd(t, s, fault.Spec{Status: 503})
	s.Match(post)
	s.Match(fault.Request{Method: "GET"})
	s.Reset(nil)
	l := s.List()
	if len(l) != 1 || l[0].ID != "scn_flaky_1" || l[0].Hits != 0 {
		t.Fatalf("after Reset: %+v", l)
	}
	if f := mustAdd(t, s, fault.Spec{Status: 503}); f.ID != "flt_1" {
		t.Errorf("after Reset the id sequence restarts: got %s", f.ID)
	}
}

func TestSnapshotsAreCopies(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	spec := fault.Spec{Status: 503, Probability: prob(1), Delay: &fault.Delay{Min: time.Second, Max: time.Second}}
	f := mustAdd(t, s, spec)
	*spec.Probability, spec.Delay.Max = 0, time.Hour
	*f.Spec.Probability = 0
	s.List()[0].Spec.Delay.Min = time.Hour
	if a, ok := s.Match(post); !ok || a.Delay != time.Second {
		t.Errorf("a caller changed a held fault: %+v %v", a, ok)
	}
}

func TestDelayDraw(t *testing.T) {
	t.Parallel()
	lo, hi := 100*time.Millisecond, 2*time.Second
	s := fault.NewSet(seeded())
	mustAdd(t, s, fault.Spec{Delay: &fault.Delay{Min: lo, Max: hi}})
	least, most := hi, lo
	for range 1000 {
		a, ok := s.Match(post)
		if !ok || a.Delay < lo || a.Delay > hi {
			t.Fatalf("delay %v outside [%v, %v]", a.Delay, lo, hi)
		}
		least, most = min(least, a.Delay), max(most, a.Delay)
	}
	if least > lo+100*time.Millisecond || most < hi-100*time.Millisecond {
		t.Errorf("1000 draws spread only over [%v, %v]", least, most)
	}

	for _, d := range []fault.Delay{{Min: 0, Max: 1<<63 - 1}, {Min: -time.Second, Max: -time.Millisecond}} {
		s := fault.NewSet(seeded())
		s.SetScenarioFaults("x", []fault.Spec{{Delay: &d}}) // unvalidated: the draw must cope
		if a, _ := s.Match(post); a.Delay < 0 || a.Delay < d.Min {
			t.Errorf("range [%v, %v] drew %v", d.Min, d.Max, a.Delay)
		}
	}
}

func TestNilRand(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(nil)
	mustAdd(t, s, fault.Spec{Status: 500, Probability: prob(0.5), Delay: &fault.Delay{Max: time.Second}})
	for range 100 {
		s.Match(post)
	}
}

func TestMarshalJSON(t *testing.T) {
	t.Parallel()
	f := fault.Fault{
		ID:     "flt_1",
		Spec:   fault.Spec{Match: fault.Match{Method: "POST"}, Status: 503, Delay: &fault.Delay{Min: time.Second, Max: 2 * time.Second}},
		Source: "api",
		Hits:   3,
	}
	got := js(t, f)
	want := `{"match":{"method":"POST"},"status":503,"delay":{"max":"2s","min":"1s"},"id":"flt_1","source":"api","hits":3}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestConcurrentMatch(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	mustAdd(t, s, fault.Spec{Status: 500, Times: 100})
	s.SetScenarioFaults("x", []fault.Spec{{Status: 502, Probability: prob(0.5), Delay: &fault.Delay{Max: time.Second}}})
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if a, ok := s.Match(post); ok && a.Status == 500 {
					counts[g]++
				}
				switch i % 50 {
				case 0:
					s.List()
				case 1:
					f, _ := s.Add(fault.Spec{Status: 503, Match: fault.Match{Method: "DELETE"}})
					s.Remove(f.ID)
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != 100 {
		t.Errorf("a times-100 fault fired %d times", total)
	}
}

// Matching goes on, lock-free, while the faults change under it: a fault that holds is
// looked at again under the lock, from the start when the faults changed in between,
// so a times fault fires exactly its times, in its place in the order.
func TestConcurrentMatchWhileChanging(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(seeded())
	first := mustAdd(t, s, fault.Spec{Match: fault.Match{Operation: "createDeployment"}, Status: 500, Times: 200})
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for g := range 2 {
		churn.Go(func() { // faults after it that hold for the request, added and removed
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				never, _ := s.Add(fault.Spec{Match: fault.Match{Method: "POST", Path: "/v1/deployments"}, Status: 503, Probability: prob(0)})
				later, _ := s.Add(fault.Spec{Match: fault.Match{Path: "/v1/deployments", Headers: map[string]string{"X-G": "*"}}, Status: 502})
				s.Remove(later.ID)
				s.Remove(never.ID)
				if i%10 == g {
					s.SetScenarioFaults("x", []fault.Spec{{Match: fault.Match{Service: "hosting"}, Status: 501, Times: 1}})
				}
			}
		})
	}
	var match sync.WaitGroup
	counts := make([]int, 4)
	for g := range 4 {
		match.Go(func() {
			r := post
			r.Header = map[string][]string{"X-G": {"1"}}
			other := false // a later fault fired: first is spent, and stays so
			for range 400 {
				a, ok := s.Match(r)
				switch {
				case !ok:
				case a.FaultID == first.ID:
					if other {
						t.Errorf("%s fired after a later fault did", first.ID)
					}
					counts[g]++
				case a.Status == 503:
					t.Errorf("a fault of probability 0 fired: %+v", a)
				default:
					other = true
				}
			}
		})
	}
	match.Wait()
	close(stop)
	churn.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != 200 {
		t.Errorf("a times-200 fault fired %d times", total)
	}
}

func BenchmarkMatchNoFaults(b *testing.B) {
	s := fault.NewSet(seeded())
	b.ReportAllocs()
	for b.Loop() {
		s.Match(post)
	}
}

func BenchmarkMatch(b *testing.B) {
	s := fault.NewSet(seeded())
	s.Add(fault.Spec{Match: fault.Match{Method: "GET", Path: "/v1/projects/*/domains"}, Status: 500})
	s.Add(fault.Spec{Match: fault.Match{Path: "/v1/deployments*"}, Status: 503, Probability: prob(0.5)})
	b.ReportAllocs()
	for b.Loop() {
		s.Match(post)
	}
}

func js(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(t testing.TB, a, b any) bool { return js(t, a) == js(t, b) }

// Codes of the fullest set, every fault with the most then steps, each of its own
// code, take time linear in them: they are gathered under the set's lock, which every
// request a fault matches waits for (a list searched for each code took 2 s).
func TestCodesOfTheFullestSet(t *testing.T) {
	t.Parallel()
	s := fault.NewSet(nil)
	for i := range fault.DefaultMax {
		then := make([]fault.Step, fault.MaxThen)
		for j := range then {
			then[j] = fault.Step{Status: 503, Code: "c_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)}
		}
		if _, err := s.Add(fault.Spec{Then: then}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(fault.Spec{Status: 503, Code: "c_0_0"}); err == nil {
		t.Fatal("a fault over the set's bound was added")
	}
	codes := s.Codes() // the worst case: a list searched for each code took 2 s here
	if len(codes) != fault.DefaultMax*fault.MaxThen || !slices.Contains(codes, "c_999_31") {
		t.Errorf("Codes: %d codes, want %d distinct", len(codes), fault.DefaultMax*fault.MaxThen)
	}
}
