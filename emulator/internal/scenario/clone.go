package scenario

import (
	"maps"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// clone copies a scenario deeply, so a caller's changes cannot reach a shared one.
func (s *Scenario) clone() *Scenario {
	c := *s
	c.DeploymentLifecycle = cloneSteps(s.DeploymentLifecycle)
	c.DeploymentRules = cloneDeploymentRules(s.DeploymentRules)
	c.DomainLifecycle = cloneSteps(s.DomainLifecycle)
	c.DomainRules = cloneDomainRules(s.DomainRules)
	c.Faults = cloneFaults(s.Faults)
	return &c
}

func cloneDeploymentRules(rules []DeploymentRule) []DeploymentRule {
	if rules == nil {
		return nil
	}
	out := make([]DeploymentRule, len(rules))
	for i, r := range rules {
		out[i] = r
		out[i].Env = maps.Clone(r.Env)
		out[i].Lifecycle = cloneSteps(r.Lifecycle)
	}
	return out
}

func cloneDomainRules(rules []DomainRule) []DomainRule {
	if rules == nil {
		return nil
	}
	out := make([]DomainRule, len(rules))
	for i, r := range rules {
		out[i] = r
		out[i].Lifecycle = cloneSteps(r.Lifecycle)
	}
	return out
}

func cloneFaults(specs []fault.Spec) []fault.Spec {
	if specs == nil {
		return nil
	}
	out := make([]fault.Spec, len(specs))
	for i, s := range specs {
		out[i] = s.Clone()
	}
	return out
}
