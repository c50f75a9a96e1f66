package scenario_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// FuzzParse checks that Parse never panics and keeps its contract: a scenario or
// problems, never both; every problem in the file with a line inside it; a scenario
// whose lifecycles start as docs/scenarios.md says and whose lookups work for any input.
// The seed corpus (testdata/fuzz/FuzzParse) holds the built-ins and broken files.
func FuzzParse(f *testing.F) {
	f.Add([]byte(productExample))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, problems := scenario.Parse("f.yaml", data)
		if (s == nil) == (len(problems) == 0) {
			t.Fatalf("scenario %v with problems %v: want exactly one", s != nil, problems)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, p := range problems {
			if p.File != "f.yaml" || p.Line < 1 || p.Line > lines {
				t.Fatalf("problem %+v: want a line from 1 to %d", p, lines)
			}
			if strings.Contains(p.Message, "internal error") {
				t.Fatalf("Parse panicked: %v", p)
			}
		}
		if s == nil {
			return
		}
		if s.Name == "" || len(s.DeploymentLifecycle) == 0 || s.DeploymentLifecycle[0].Status != "queued" ||
			len(s.DomainLifecycle) == 0 || s.DomainLifecycle[0].Status != "pending" {
			t.Fatalf("invalid scenario accepted: %+v", s)
		}
		for _, r := range s.DeploymentRules {
			if r.Lifecycle[0].Status != "queued" || r.Lifecycle[0].After != 0 {
				t.Fatalf("rule lifecycle %+v", r.Lifecycle)
			}
		}
		for _, f := range s.Faults {
			if err := f.Validate(); err != nil {
				t.Fatalf("fault %+v accepted: %v", f, err)
			}
		}
		if s.Certificates.RenewBefore >= s.Certificates.ValidFor || s.RateLimits.PerTokenPerSecond <= 0 {
			t.Fatalf("limits accepted: %+v %+v", s.Certificates, s.RateLimits)
		}
		input := string(data)
		_ = s.DeploymentSteps(input, input, map[string]string{input: input})
		_ = s.DomainSteps(input)
	})
}
