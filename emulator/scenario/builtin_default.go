package scenario

import "time"

// builtinDefault is the default scenario as PRODUCT.md's "Lifecycles" fixes it.
// TODO(scenario engine): replaced by scenarios/default.yaml once the parser lands.
func builtinDefault() *Scenario {
	return &Scenario{
		Name:        "default",
		Description: "Builds are ready within 6 s and never fail; domains are active within 12 s.",
		Source:      "builtin",
		Uploads:     UploadsLenient,
		DeploymentLifecycle: []Step{
			{Status: "queued"},
			{Status: "building", After: time.Second},
			{Status: "ready", After: 5 * time.Second},
		},
		DomainLifecycle: []Step{
			{Status: "pending"},
			{Status: "verifying", After: 2 * time.Second},
			{Status: "active", After: 10 * time.Second},
		},
		Certificates: Certificates{Issuer: "hostemu Test CA", ValidFor: 90 * 24 * time.Hour, RenewBefore: 30 * 24 * time.Hour},
		RateLimits:   RateLimits{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, PerIPPerSecond: 10, Burst: 30 * time.Second},
	}
}

// Default returns the built-in default scenario.
func Default() *Scenario { return builtinDefault() }
