package scenario_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

const thirtyPercent = `name: flaky-30
deployments:
  rules:
    - when: {probability: 0.3}
      lifecycle:
        - status: queued
        - status: building
          after: 1s
        - status: error
          after: 1s
`

// A rule with when.probability matches that share of deployments, drawn from the
// source the caller passes (the world's seeded one): the same draws pick the same
// deployments, and with no draw it never matches.
func TestRuleProbability(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "flaky-30.yaml", thirtyPercent)
	failed := func(seed uint64) int {
		n := 0
		for i := range 1000 {
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			steps := s.DeploymentStepsFor("prj_a", "production", nil, r.Float64)
			if steps[len(steps)-1].Status == "error" {
				n++
			}
		}
		return n
	}
	a := failed(7)
	if a < 250 || a > 350 {
		t.Errorf("%d of 1000 failed, want about 300", a)
	}
	if b := failed(7); b != a {
		t.Errorf("same seed: %d then %d", a, b)
	}
	if steps := s.DeploymentSteps("prj_a", "production", nil); steps[len(steps)-1].Status != "ready" {
		t.Errorf("without a draw a probability rule matched: %v", steps)
	}
	// A rule that fires only sometimes shadows nothing after it.
	mustParse(t, "s.yaml", "deployments:\n  rules:\n    - when: {probability: 0.5}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n    - when: {target: preview}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n")
	for _, bad := range []struct{ text, want string }{
		{"deployments:\n  rules:\n    - when: {probability: 0}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n", "probability: 0 is out of range: want a number more than 0 and at most 1"},
		{"deployments:\n  rules:\n    - when: {probability: 1.5}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n", "probability: 1.5 is out of range"},
		{"deployments:\n  rules:\n    - when: {probability: often}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n", "probability: want a number"},
	} {
		_, problems := scenario.Parse("s.yaml", []byte(bad.text))
		if len(problems) != 1 || !strings.Contains(problems[0].Message, bad.want) {
			t.Errorf("%q: problems %v, want %q", bad.text, problems, bad.want)
		}
	}
}
