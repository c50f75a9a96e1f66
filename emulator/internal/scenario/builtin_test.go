package scenario_test

import (
	"io/fs"
	"reflect"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/scenarios"
)

const day = 24 * time.Hour

func newRegistry(tb testing.TB) *scenario.Registry {
	tb.Helper()
	r, err := scenario.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func builtin(tb testing.TB, name string) *scenario.Scenario {
	tb.Helper()
	s, ok := newRegistry(tb).Get(name)
	if !ok {
		tb.Fatalf("no built-in scenario %q", name)
	}
	return s
}

func statuses(steps []scenario.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Status)
	}
	return out
}

func TestBuiltinsParse(t *testing.T) {
	files, err := fs.Glob(scenarios.FS, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default", "failing-builds", "flaky", "instant", "rate-limited", "slow-dns", "strict-uploads"}
	var names []string
	for _, info := range newRegistry(t).List() {
		names = append(names, info.Name)
		if info.Source != scenario.SourceBuiltin || info.Description == "" {
			t.Errorf("%s: source %q, description %q", info.Name, info.Source, info.Description)
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("built-ins %v, want %v", names, want)
	}
	for _, f := range files {
		data, _ := fs.ReadFile(scenarios.FS, f)
		s, problems := scenario.Parse(f, data)
		if len(problems) > 0 || s == nil {
			t.Errorf("%s: %v", f, problems)
			continue
		}
		if s.Name+".yaml" != f {
			t.Errorf("%s is named %q: keep file and scenario names alike", f, s.Name)
		}
	}
}

func TestDefaultIsProductDefault(t *testing.T) {
	s := mustDefault(t)
	want := &scenario.Scenario{
		Name:        "default",
		Description: s.Description,
		Source:      scenario.SourceBuiltin,
		Uploads:     scenario.UploadsLenient,
		DeploymentLifecycle: []scenario.Step{
			{Status: "queued"}, {Status: "building", After: time.Second}, {Status: "ready", After: 5 * time.Second},
		},
		DeploymentRules: []scenario.DeploymentRule{},
		DomainLifecycle: []scenario.Step{
			{Status: "pending"}, {Status: "verifying", After: 2 * time.Second}, {Status: "active", After: 10 * time.Second},
		},
		DomainRules:  []scenario.DomainRule{},
		Certificates: scenario.Certificates{Issuer: "hostemu Test CA", ValidFor: 90 * day, RenewBefore: 30 * day},
		RateLimits: scenario.RateLimits{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000,
			PerIPPerSecond: 10, Burst: 30 * time.Second},
	}
	got := *s
	got.Faults = nil // compared below; the unexported line is not ours to compare
	if !reflect.DeepEqual(exported(&got), exported(want)) {
		t.Errorf("Default() = %+v\nwant %+v", got, *want)
	}
	if len(s.Faults) != 0 {
		t.Errorf("faults %v, want none", s.Faults)
	}
	// Default returns a copy: changing it changes nothing for others.
	s.DeploymentLifecycle[1].After = time.Hour
	if mustDefault(t).DeploymentLifecycle[1].After != time.Second {
		t.Error("Default() shares its lifecycle with callers")
	}
}

// mustDefault is scenario.Default, which a broken default.yaml fails.
func mustDefault(tb testing.TB) *scenario.Scenario {
	tb.Helper()
	s, err := scenario.Default()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// exported copies the exported fields, the only ones callers see.
func exported(s *scenario.Scenario) scenario.Scenario {
	return scenario.Scenario{
		Name: s.Name, Description: s.Description, Source: s.Source, Uploads: s.Uploads,
		DeploymentLifecycle: s.DeploymentLifecycle, DeploymentRules: s.DeploymentRules,
		DomainLifecycle: s.DomainLifecycle, DomainRules: s.DomainRules,
		Certificates: s.Certificates, RateLimits: s.RateLimits, Faults: s.Faults,
	}
}

func TestInstant(t *testing.T) {
	s := builtin(t, "instant")
	for _, steps := range [][]scenario.Step{s.DeploymentSteps("prj_a", "production", nil), s.DomainSteps("shop.test")} {
		if len(steps) != 3 {
			t.Fatalf("steps %v, want three", steps)
		}
		for _, st := range steps {
			if st.After != 0 {
				t.Errorf("%s after %v, want 0", st.Status, st.After)
			}
		}
	}
	if got := statuses(s.DeploymentSteps("", "", nil)); !reflect.DeepEqual(got, []string{"queued", "building", "ready"}) {
		t.Errorf("deployment %v", got)
	}
	if got := statuses(s.DomainSteps("a.test")); !reflect.DeepEqual(got, []string{"pending", "verifying", "active"}) {
		t.Errorf("domain %v", got)
	}
}

func TestFailingBuilds(t *testing.T) {
	s := builtin(t, "failing-builds")
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, "error"},
		{map[string]string{"BUILD_SHOULD_PASS": "false"}, "error"},
		{map[string]string{"OTHER": "true"}, "error"},
		{map[string]string{"BUILD_SHOULD_PASS": "true"}, "ready"},
		{map[string]string{"BUILD_SHOULD_PASS": "true", "X": "y"}, "ready"},
	}
	for _, tt := range tests {
		steps := s.DeploymentSteps("prj_x", "production", tt.env)
		last := steps[len(steps)-1]
		if last.Status != tt.want {
			t.Errorf("env %v: ends %s, want %s", tt.env, last.Status, tt.want)
		}
		if last.Status == "error" && (last.Error == nil || last.Error.Code != "build_failed" || last.Error.Message == "") {
			t.Errorf("error step %+v, want build_failed with a message", last.Error)
		}
	}
}

func TestSlowDNS(t *testing.T) {
	s := builtin(t, "slow-dns")
	tests := []struct {
		hostname string
		want     []string
	}{
		{"shop.test", []string{"pending", "verifying", "active"}},
		{"*.shop.test", []string{"pending", "verifying", "active"}},
		{"app.never.test", []string{"pending"}},
		{"a.b.never.test", []string{"pending"}},
		{"*.never.test", []string{"pending"}},
		{"APP.Never.Test", []string{"pending"}},
		{"never.test", []string{"pending", "verifying", "error"}},
		{"never.example.test", []string{"pending", "verifying", "error"}},
		{"notnever.example.test", []string{"pending", "verifying", "active"}},
	}
	for _, tt := range tests {
		steps := s.DomainSteps(tt.hostname)
		if got := statuses(steps); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.hostname, got, tt.want)
		}
	}
	if steps := s.DomainSteps("shop.test"); steps[1].After < time.Minute {
		t.Errorf("slow-dns verifies after %v: not slow", steps[1].After)
	}
	if last := s.DomainSteps("never.example.test")[2]; last.Error == nil || last.Error.Code != "verification_failed" {
		t.Errorf("never.* error %+v", last.Error)
	}
}

func TestFlaky(t *testing.T) {
	s := builtin(t, "flaky")
	var unavailable, slow int
	for _, f := range s.Faults {
		if err := f.Validate(); err != nil {
			t.Errorf("fault %+v: %v", f, err)
		}
		if f.Match.Service != "hosting" || f.Match.Path != "/v1/*" || f.Probability == nil || *f.Probability <= 0 || *f.Probability >= 1 {
			t.Errorf("fault %+v: want a share of /v1/* hosting requests", f)
		}
		switch {
		case f.Status == 503:
			unavailable++
			if *f.Probability != 0.2 || f.Code != "service_unavailable" {
				t.Errorf("503 fault %+v", f)
			}
		case f.Delay != nil:
			slow++
			if f.Delay.Min != 200*time.Millisecond || f.Delay.Max != 2*time.Second {
				t.Errorf("delay %+v", *f.Delay)
			}
		}
	}
	if unavailable != 1 || slow != 1 || len(s.Faults) != 2 {
		t.Errorf("faults %+v: want one 503 and one delay", s.Faults)
	}
}

func TestRateLimited(t *testing.T) {
	s := builtin(t, "rate-limited")
	want := scenario.RateLimits{Enabled: true, PerTokenPerSecond: 2, PerTokenPerMinute: 20, PerIPPerSecond: 1, Burst: time.Second}
	if !reflect.DeepEqual(s.RateLimits, want) {
		t.Errorf("rate limits %+v, want %+v", s.RateLimits, want)
	}
	if !reflect.DeepEqual(s.DeploymentLifecycle, mustDefault(t).DeploymentLifecycle) {
		t.Error("lifecycles should come from default")
	}
}

// strict-uploads changes only the uploads mode.
func TestBuiltinStrictUploads(t *testing.T) {
	s, d := builtin(t, "strict-uploads"), builtin(t, "default")
	if s.Uploads != scenario.UploadsStrict || d.Uploads != scenario.UploadsLenient {
		t.Fatalf("uploads %q (default %q)", s.Uploads, d.Uploads)
	}
	if !reflect.DeepEqual(s.DeploymentLifecycle, d.DeploymentLifecycle) || !reflect.DeepEqual(s.RateLimits, d.RateLimits) {
		t.Error("strict-uploads changes more than uploads")
	}
}
