package scenario

import (
	"maps"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// clone copies a scenario deeply, so a caller's changes cannot reach a shared one.
func (s *Scenario) clone() *Scenario {
	c := *s
	c.DeploymentLifecycle = cloneSteps(s.DeploymentLifecycle)
	c.DeploymentRules = cloneEach(s.DeploymentRules, func(r DeploymentRule) DeploymentRule {
		r.Env = maps.Clone(r.Env)
		r.Lifecycle = cloneSteps(r.Lifecycle)
		return r
	})
	c.DomainLifecycle = cloneSteps(s.DomainLifecycle)
	c.DomainRules = cloneEach(s.DomainRules, func(r DomainRule) DomainRule {
		r.Lifecycle = cloneSteps(r.Lifecycle)
		return r
	})
	c.Faults = cloneEach(s.Faults, fault.Spec.Clone)
	c.RateLimits.PerScope = maps.Clone(s.RateLimits.PerScope)
	if e := s.Certificates.RenewalError; e != nil {
		cp := *e
		c.Certificates.RenewalError = &cp
	}
	return &c
}

func cloneSteps(steps []Step) []Step {
	return cloneEach(steps, func(s Step) Step {
		if s.Error != nil {
			e := *s.Error
			s.Error = &e
		}
		return s
	})
}

// cloneEach copies list with each item copied by clone; nil stays nil.
func cloneEach[T any](list []T, clone func(T) T) []T {
	if list == nil {
		return nil
	}
	out := make([]T, len(list))
	for i, v := range list {
		out[i] = clone(v)
	}
	return out
}
