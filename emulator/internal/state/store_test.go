package state

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func world(t *testing.T, n int) *Store {
	t.Helper()
	snap := Snapshot{Projects: []Project{{ID: "prj_a", Name: "a", CreatedAt: t0}, {ID: "prj_b", Name: "b", CreatedAt: t0}}}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		p := "prj_a"
		if i%3 == 0 {
			p = "prj_b"
		}
		// shuffled creation times with ties, to exercise the id tie-break
		d := Deployment{Files: map[string]string{}, ID: fmt.Sprintf("dpl_%04d", i), ProjectID: p, Target: TargetPreview,
			CreatedAt: t0.Add(time.Duration(r.IntN(n/2+1)) * time.Second)}
		d.SetStatus(nil, StatusReady, nil, d.CreatedAt)
		snap.Deployments = append(snap.Deployments, d)
	}
	s := New()
	if err := s.Load(snap); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDeploymentsPagesMatchSortedOrder(t *testing.T) {
	s := world(t, 500)
	snap := s.Export()
	want := snap.Deployments
	if !sort.SliceIsSorted(want, func(i, j int) bool {
		return keyOf(want[i].CreatedAt, want[i].ID).before(keyOf(want[j].CreatedAt, want[j].ID))
	}) {
		t.Fatal("export is not newest first")
	}
	for _, limit := range []int{1, 7, 100} {
		var got []string
		var after *Key
		for {
			page, next, err := s.Deployments(DeploymentQuery{Limit: limit, Range: Range{After: after}})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page {
				got = append(got, d.ID)
			}
			if next == nil {
				break
			}
			after = next
		}
		if len(got) != len(want) {
			t.Fatalf("limit %d: walked %d of %d", limit, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i].ID {
				t.Fatalf("limit %d: item %d is %s, want %s", limit, i, got[i], want[i].ID)
			}
		}
	}
}

func TestDeploymentRanges(t *testing.T) {
	s := world(t, 200)
	lo, hi := t0.Add(20*time.Second), t0.Add(60*time.Second)
	page, _, err := s.Deployments(DeploymentQuery{ProjectID: "prj_b", Limit: 100, Range: Range{Oldest: lo, Newest: hi}})
	if err != nil {
		t.Fatal(err)
	}
	all := s.Export().Deployments
	n := 0
	for _, d := range all {
		if d.ProjectID == "prj_b" && d.CreatedAt.After(lo) && d.CreatedAt.Before(hi) {
			n++
		}
	}
	if len(page) != n || n == 0 {
		t.Fatalf("range gave %d, want %d", len(page), n)
	}
	for _, d := range page {
		if !d.CreatedAt.After(lo) || !d.CreatedAt.Before(hi) || d.ProjectID != "prj_b" {
			t.Fatalf("%s at %v is outside the range", d.ID, d.CreatedAt)
		}
	}
}

func TestLoadRejectsInconsistentSnapshot(t *testing.T) {
	s := world(t, 3)
	before := s.Export()
	bad := before
	bad.Deployments = append([]Deployment{}, before.Deployments...)
	bad.Deployments[0].ProjectID = "prj_missing"
	if err := s.Load(bad); err == nil {
		t.Fatal("a deployment of a missing project was accepted")
	}
	if got := s.Export(); len(got.Deployments) != len(before.Deployments) || got.Deployments[0].ProjectID != before.Deployments[0].ProjectID {
		t.Fatal("a refused load changed the state")
	}
	// Load builds its tables beside the check: what the check refuses (a domain of a
	// missing project, a duplicate id) must neither break that build nor show
	bad = before
	bad.Domains = []Domain{{Hostname: "shop.example.com", ProjectID: "prj_missing", Status: StatusPending, TLS: TLS{Status: TLSPending}, CreatedAt: t0}}
	bad.Deployments = append(append([]Deployment{}, before.Deployments...), before.Deployments[0])
	if err := s.Load(bad); err == nil || !strings.Contains(err.Error(), "prj_missing") || !strings.Contains(err.Error(), "duplicate id") {
		t.Fatalf("refused for %v", err)
	}
	if got := s.Export(); !reflect.DeepEqual(got, before) {
		t.Fatal("a refused load changed the state")
	}
}

func TestPromoteIsAtomic(t *testing.T) {
	s := world(t, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			s.Promote(fmt.Sprintf("dpl_%04d", 1+i%2))
		}
	}()
	for i := 0; i < 1000; i++ {
		p, _ := s.Project("prj_a")
		if p.ProductionDeploymentID != "" && p.ProductionDeploymentID != "dpl_0001" && p.ProductionDeploymentID != "dpl_0002" {
			t.Fatalf("production pointer %q", p.ProductionDeploymentID)
		}
	}
	<-done
}

func TestTokens(t *testing.T) {
	s := New()
	s.AddToken(Token{Token: "abc", Scope: ScopeDeploy})
	if sc, ok := s.Authenticate("abc"); !ok || sc != ScopeDeploy {
		t.Fatal("token not found")
	}
	for _, bad := range []string{"", "ab", "abcd", "ABC"} {
		if _, ok := s.Authenticate(bad); ok {
			t.Errorf("%q authenticated", bad)
		}
	}
	if !s.RevokeToken("abc") || s.RevokeToken("abc") {
		t.Error("revoke")
	}
	if !ScopeAdmin.Allows(ScopeDeploy) || ScopeRead.Allows(ScopeDeploy) || !ScopeDeploy.Allows(ScopeRead) {
		t.Error("scope order")
	}
}

func TestTokenKeys(t *testing.T) {
	s := New()
	s.AddToken(Token{Token: "secret-one", Scope: ScopeRead})
	s.AddToken(Token{Token: "secret-two", Scope: ScopeAdmin})
	_, k1, ok1 := s.AuthenticateKey("secret-one")
	_, k2, ok2 := s.AuthenticateKey("secret-two")
	if !ok1 || !ok2 || k1 == k2 || strings.Contains(k1+k2, "secret") {
		t.Fatalf("keys %q %q", k1, k2)
	}
	s.AddToken(Token{Token: "secret-one", Scope: ScopeDeploy}) // a new scope, the same token
	// the same key, which ends with the scope the limiter reads (rate_limits.per_scope)
	base, _, _ := strings.Cut(k1, LimitScopeMark)
	if sc, k, _ := s.AuthenticateKey("secret-one"); sc != ScopeDeploy || k != base+LimitScopeMark+"deploy" {
		t.Errorf("re-added token: scope %s key %q, want deploy and %q", sc, k, base+LimitScopeMark+"deploy")
	}
	if got := len(s.Tokens()); got != 2 {
		t.Errorf("%d tokens, want 2", got)
	}
}

// A snapshot the API could never have made is refused, naming what is wrong.
func TestCheckRefusesWhatTheAPICannotMake(t *testing.T) {
	at := t0
	ready := func() Deployment {
		d := Deployment{Files: map[string]string{}, ID: "dpl_a", ProjectID: "prj_a", Target: TargetProduction, CreatedAt: at}
		d.SetStatus(nil, StatusReady, nil, at)
		return d
	}
	base := func() Snapshot {
		return Snapshot{Projects: []Project{{ID: "prj_a", Name: "a", CreatedAt: at, ProductionDeploymentID: "dpl_a"}},
			Deployments: []Deployment{ready()},
			Domains:     []Domain{{Hostname: "shop.test", ProjectID: "prj_a", Status: StatusPending, CreatedAt: at, TLS: TLS{Status: TLSPending}}}}
	}
	b := base()
	if err := b.Check(); err != nil {
		t.Fatalf("the base snapshot: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(s *Snapshot)
	}{
		{"upper-case hostname", "not a lower-case", func(s *Snapshot) { s.Domains[0].Hostname = "UPPER.TEST" }},
		// an enum value refused names the closest known one, or lists them
		{"a token's scope misspelt", `tokens: unknown scope "raed" (did you mean "read"?)`, func(s *Snapshot) { s.Tokens = []Token{{Token: "t", Scope: "raed"}} }},
		{"a token's scope far off", `tokens: unknown scope "root" (want read, deploy, admin)`, func(s *Snapshot) { s.Tokens = []Token{{Token: "t", Scope: "root"}} }},
		{"a domain's status misspelt", `domain "shop.test": unknown status "pendng" (did you mean "pending"?)`, func(s *Snapshot) { s.Domains[0].Status = "pendng" }},
		{"a domain's tls status misspelt", `domain "shop.test": unknown tls status "isued" (did you mean "issued"?)`, func(s *Snapshot) { s.Domains[0].TLS.Status = "isued" }},
		{"a deployment's status misspelt", `deployment "dpl_a": unknown status "redy" (did you mean "ready"?)`, func(s *Snapshot) { s.Deployments[0].Status = "redy" }},
		{"a deployment's target misspelt", `deployment "dpl_a": unknown target "prod" (want preview, production)`, func(s *Snapshot) { s.Deployments[0].Target = "prod" }},
		{"the policy's scope misspelt", `policy.domain_write_scope: "admn" is not admin or deploy (did you mean "admin"?)`, func(s *Snapshot) { s.Policy.DomainWriteScope = "admn" }},
		{"empty hostname", "not a lower-case", func(s *Snapshot) { s.Domains[0].Hostname = "" }},
		{"hostname with a slash and a space", "not a lower-case", func(s *Snapshot) { s.Domains[0].Hostname = "a/b c" }},
		{"redirect_to not normalized", "redirect_to", func(s *Snapshot) { s.Domains[0].RedirectTo = "Other.TEST." }},
		{"domain error without error status", "error is set exactly", func(s *Snapshot) { s.Domains[0].Error = &ErrorInfo{Code: "x", Message: "y"} }},
		{"ready without building_at", "needs timings.building_at", func(s *Snapshot) { s.Deployments[0].Timings.BuildingAt = nil }},
		{"ready with error_at", "cannot have timings.error_at", func(s *Snapshot) { s.Deployments[0].Timings.ErrorAt = &at }},
		{"error without an error object", "error is set exactly", func(s *Snapshot) {
			s.Deployments[0].Status = StatusError
			s.Deployments[0].Timings.ErrorAt = &at
		}},
		{"queued with later timings", "cannot have timings.building_at", func(s *Snapshot) { s.Deployments[0].Status = StatusQueued }},
		{"master key of 16 bytes", `key "k1" is 16 bytes, want 32`, func(s *Snapshot) {
			s.Cipher.MasterKeys = []MasterKey{{ID: "k1", Key: make([]byte, 16)}}
		}},
		{"production deployment never ready", "never ready", func(s *Snapshot) {
			d := &s.Deployments[0]
			d.Status, d.Timings = StatusBuilding, Timings{QueuedAt: &at, BuildingAt: &at}
		}},
		// env names in the API's words (world's create answers EnvProblem too)
		{"deployment env name with =", `deployment "dpl_a": field "env": "A=B" is not a variable name (` + EnvNameRule + `)`, func(s *Snapshot) {
			s.Deployments[0].Env = map[string]string{"OK": "1", "A=B": "2"}
		}},
		{"deployment env name from a digit", `deployment "dpl_a": field "env": "1X" is not a variable name`, func(s *Snapshot) {
			s.Deployments[0].Env = map[string]string{"1X": "2", "Z-Z": "3"} // the first in order is named
		}},
		{"deployment env name empty", `deployment "dpl_a": field "env" has an empty variable name`, func(s *Snapshot) {
			s.Deployments[0].Env = map[string]string{"": "1"}
		}},
		{"project env name with a space", `project "prj_a": field "env": "A B" is not a variable name`, func(s *Snapshot) {
			s.Projects[0].Env = map[string]string{"A B": "1"}
		}},
		{"project env name not ASCII", `project "prj_a": field "env": "É" is not a variable name`, func(s *Snapshot) {
			s.Projects[0].Env = map[string]string{"É": "1"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(&s)
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestMissingFiles(t *testing.T) {
	s := New()
	have, a, b := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	s.AddFile(have, []byte("x"))
	got := s.MissingFiles(map[string]string{"/1": b, "/2": have, "/3": a, "/4": b})
	if strings.Join(got, ",") != a+","+b {
		t.Fatalf("MissingFiles = %v, want [%s %s]", got, a, b)
	}
	if got := s.MissingFiles(map[string]string{"/": have}); got != nil {
		t.Fatalf("MissingFiles of uploaded files = %v", got)
	}
}

// SortAsExport puts shuffled deployments (with created_at ties) back in Export's order.
func TestSortAsExportMatchesExport(t *testing.T) {
	want := world(t, 200).Export()
	snap := want
	snap.Deployments = append([]Deployment(nil), want.Deployments...)
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(snap.Deployments), func(i, j int) {
		snap.Deployments[i], snap.Deployments[j] = snap.Deployments[j], snap.Deployments[i]
	})
	snap.SortAsExport()
	for i := range want.Deployments {
		if got := snap.Deployments[i].ID; got != want.Deployments[i].ID {
			t.Fatalf("deployment %d is %s, want %s", i, got, want.Deployments[i].ID)
		}
	}
}

// FuzzDeploymentByLabel holds DeploymentByLabel, which finds most labels through the
// id their suffix names (setLabel), to a map of every label to the deployment set last
// with it: creates and loads of deployments whose URLs name their own id, an other
// deployment's, a label without a hyphen, a long suffix, or an id that is not
// "dpl_"-prefixed, labels shared between them, in any order.
func FuzzDeploymentByLabel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 9, 3, 27, 200, 4, 18, 255, 7, 7, 7})
	f.Add([]byte{12, 12, 0, 40, 81, 122, 163, 204, 245})
	long := strings.Repeat("q", 41)
	ids := []string{"dpl_a1", "dpl_b2", "dpl_c3", "dpl_" + long, "dpl_" + long[:40], "x_a1", "dpl_a-1", "dpl_"}
	labels := []string{"shop-a1", "shop-b2", "other-c3", "shop-" + long, "s-" + long[:40], "a1", "shop-", "x-a1", "shop-1", "nolabel"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		s := New()
		snap := Snapshot{Projects: []Project{{ID: "prj_a", Name: "shop", CreatedAt: t0}}}
		if err := s.Load(snap); err != nil {
			t.Fatal(err)
		}
		model := map[string]string{}
		for i, op := range ops {
			if op%16 == 15 { // a load of the state as exported: its order decides the last
				exp := s.Export()
				if err := s.Load(exp); err != nil {
					continue
				}
				clear(model)
				for _, d := range exp.Deployments {
					model[labelOf(d.URL)] = d.ID
				}
				continue
			}
			// ids[op%8] under the URL hostemu would make for it (op < 128), else under
			// labels[op>>3%10]: bits apart from the id's, so that any id takes any label
			// (op&4 chose before, a bit of the id's: ids[:4] always had their own URL,
			// ids[4:] never, the 40-character id among them)
			id := ids[int(op)%len(ids)]
			label := labels[int(op>>3)%len(labels)]
			if op < 128 && strings.HasPrefix(id, "dpl_") && len(id) > 4 { // the URL hostemu would make
				label = "shop-" + id[4:]
			}
			d := Deployment{Files: map[string]string{}, ID: id, ProjectID: "prj_a", URL: "https://" + label + ".hostemu.localhost", Target: TargetPreview,
				CreatedAt: t0.Add(time.Duration(i) * time.Second)}
			d.SetStatus(nil, StatusQueued, nil, d.CreatedAt)
			if err := s.CreateDeployment(d); err != nil {
				continue // the id is taken
			}
			model[label] = id
			for _, l := range append(slices.Clone(labels), "shop-"+id[min(4, len(id)):]) {
				got, ok := s.DeploymentByLabel(l)
				want, wantOK := model[l]
				if ok != wantOK || got.ID != want {
					t.Fatalf("after %d ops, label %q: %q %v, want %q %v", i+1, l, got.ID, ok, want, wantOK)
				}
			}
		}
	})
}

// An index's insert keeps its keys sorted whatever their order: mostly the newest (its
// append), some older, ties of time broken by id, a key equal to one held.
func TestIndexInsertKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 201 {
		var x index
		var all []Key
		n := r.IntN(60)
		if i == 200 {
			n = 5000 // a long index, doubled as it grows
		}
		dense := i%3 == 1 // up to 40 keys in one instant, as a real clock's creates are
		if dense {
			n = r.IntN(400)
		}
		for j := range n {
			k := Key{At: int64(j), ID: fmt.Sprint(r.IntN(5))}
			if dense {
				k = Key{At: int64(j / 40), ID: fmt.Sprint(r.IntN(1000))}
			}
			if r.IntN(3) == 0 {
				k.At = int64(r.IntN(j + 1))
			}
			x.insert(k)
			all = append(all, k)
		}
		want := slices.Clone(all)
		slices.SortStableFunc(want, keyOrder)
		if !slices.Equal(x.keys, want) {
			t.Fatalf("inserted %v: %v, want %v", all, x.keys, want)
		}
	}
}

// NewDeploymentWeight, with the EntryWeight of each entry summed, is WeightOf of the
// deployment it stands for, whatever its maps and lengths.
func TestNewDeploymentWeight(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	str := func() string { return strings.Repeat("k", r.IntN(40)) + fmt.Sprint(r.IntN(1000)) }
	for range 500 {
		env, files := map[string]string{}, map[string]string{}
		var entries int64
		for range r.IntN(6) {
			env[str()] = str()
		}
		for range r.IntN(6) {
			files[str()] = str()
		}
		if r.IntN(4) == 0 {
			env, files = nil, map[string]string{}
		}
		for _, m := range []map[string]string{env, files} {
			for k, v := range m {
				entries += EntryWeight(k, v)
			}
		}
		id, url := "dpl_"+str(), str()+".hostemu.localhost"
		if got, want := NewDeploymentWeight(len(id), len(url), entries), WeightOf(&Deployment{ID: id, URL: url, Env: env, Files: files}); got != want {
			t.Fatalf("NewDeploymentWeight = %d, WeightOf %d", got, want)
		}
	}
}

// Load's check looks projects' production deployments up in the map its build makes,
// not in one of its own: it must refuse exactly what Check refuses, in Check's words and
// order, whatever is wrong (ids twice included, where it falls back to Check itself).
func TestLoadRefusesInCheckWords(t *testing.T) {
	base := world(t, 40).Export()
	r := rand.New(rand.NewPCG(3, 4))
	breaks := []func(s *Snapshot){
		func(s *Snapshot) {}, // nothing wrong
		func(s *Snapshot) { s.Projects[0].ProductionDeploymentID = "dpl_nowhere" },
		func(s *Snapshot) { // another project's deployment
			for _, d := range s.Deployments {
				if d.ProjectID != s.Projects[0].ID {
					s.Projects[0].ProductionDeploymentID = d.ID
					return
				}
			}
		},
		func(s *Snapshot) { // never ready
			d := &s.Deployments[r.IntN(len(s.Deployments))]
			d.Status, d.Timings.ReadyAt = StatusBuilding, nil
			for i := range s.Projects {
				if s.Projects[i].ID == d.ProjectID {
					s.Projects[i].ProductionDeploymentID = d.ID
				}
			}
		},
		func(s *Snapshot) { // an id twice, and a production deployment of that id
			i, j := r.IntN(len(s.Deployments)), r.IntN(len(s.Deployments))
			s.Deployments[j].ID = s.Deployments[i].ID
			s.Projects[1].ProductionDeploymentID = s.Deployments[i].ID
		},
		func(s *Snapshot) { s.Deployments[r.IntN(len(s.Deployments))].ProjectID = "prj_missing" },
		func(s *Snapshot) { s.Deployments[r.IntN(len(s.Deployments))].Status = "lost" },
		func(s *Snapshot) { s.Projects[1].ProductionDeploymentID = "" },
	}
	for round := 0; round < 200; round++ {
		snap := base
		snap.Projects = slices.Clone(base.Projects)
		snap.Deployments = slices.Clone(base.Deployments)
		for k := r.IntN(3) + 1; k > 0; k-- {
			breaks[r.IntN(len(breaks))](&snap)
		}
		want := fmt.Sprint(snap.Check())
		if got := fmt.Sprint(New().Load(snap)); got != want {
			t.Fatalf("round %d: Load refused with\n%s\nCheck with\n%s", round, got, want)
		}
	}
}

// Prepare changes nothing; Commit puts what was prepared in place as Load would, or,
// for a snapshot the check refuses, returns the check's verdict and changes nothing.
func TestPrepareChangesNothingUntilCommit(t *testing.T) {
	s := world(t, 30)
	before := s.Export()
	next := world(t, 60).Export()
	p := s.Prepare(next)
	if p.Err() != nil || !p.HasDeployment(next.Deployments[0].ID) || p.HasDeployment("dpl_nowhere") {
		t.Fatalf("prepared: %v", p.Err())
	}
	if !reflect.DeepEqual(s.Export(), before) {
		t.Fatal("Prepare changed the store")
	}
	if err := s.Commit(p); err != nil {
		t.Fatal(err)
	}
	loaded := New()
	if err := loaded.Load(world(t, 60).Export()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Export(), loaded.Export()) {
		t.Fatal("a prepared snapshot committed is another state than the same loaded")
	}

	bad := world(t, 10).Export()
	bad.Deployments[0].ProjectID = "prj_missing"
	committed := s.Export()
	p = s.Prepare(bad)
	if p.Err() == nil {
		t.Fatal("the check passed a deployment of a missing project")
	}
	if err := s.Commit(p); err == nil || err.Error() != p.Err().Error() {
		t.Fatalf("Commit: %v, want the check's %v", err, p.Err())
	}
	if !reflect.DeepEqual(s.Export(), committed) {
		t.Fatal("a refused snapshot changed the store")
	}
}
