package emulator_test

import (
	"fmt"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A domain rule with when.probability applies to about that share of the hostnames its
// glob matches, drawn from the seed: the same hostnames with one seed, every time.
func TestDomainRuleProbability(t *testing.T) {
	t.Parallel()
	scenario := `name: flaky-dns
description: half the flaky domains never verify
domains:
  rules:
    - when: {hostname: "*.flaky.test", probability: 0.5}
      lifecycle:
        - {status: pending}
        - {status: verifying, after: 1s}
        - {status: error, after: 1s, error: {code: verification_failed, message: "TXT record not found"}}
`
	outcome := func(seed int64) string {
		e := newEnv(t, func(o *emulator.Options) {
			o.Seed = seed
			o.ScenarioYAML = []string{scenario}
			o.Scenario = "flaky-dns"
		})
		for i := range 24 {
			mustStatus(t, e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": fmt.Sprintf("d%d.flaky.test", i)}), 201)
		}
		e.advance("1m")
		var out []byte
		list := decode[emulator.DomainList](t, e.get("/v1/projects/prj_shop/domains?limit=100", "t-read"))
		for _, d := range list.Domains {
			if d.Status == "error" {
				out = append(out, 'E')
			} else if d.Status == "active" {
				out = append(out, 'a')
			}
		}
		return string(out)
	}
	a, b := outcome(7), outcome(7)
	if a != b {
		t.Fatalf("one seed, two outcomes: %s and %s", a, b)
	}
	errs := 0
	for _, c := range a {
		if c == 'E' {
			errs++
		}
	}
	if errs == 0 || errs == 24 || len(a) < 24 {
		t.Fatalf("outcome %s: want some of the 24 flaky domains failed and some active", a)
	}
}
