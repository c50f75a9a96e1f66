// Package scenario reads, validates and compiles YAML scenarios: the lifecycles of
// deployments and domains, certificates, rate limits and faults of one emulated world.
// A compiled *Scenario is immutable; a reload swaps in a new one.
//
// The built-in scenarios (scenarios/*.yaml) are parsed on first use, each once a
// process and shared by every registry: a start parses the one it runs on, not all of
// them (issue #38). A built-in's name is therefore its file's name, known without a
// parse, and TestBuiltinsParse, parsing every file, fails when a file's name: says
// otherwise or a file is broken; should one still ship broken, choosing it is an
// internal error naming the file (BuiltinError), and List (GET /_emulator/scenarios)
// shows it with that error as its Info.Problem rather than an empty description. List
// parses the rest, for their descriptions, on its first call; Sources, the text a
// bundle export holds, parses none (a built-in's is its file).
//
// default.yaml is the exception: the base of every other parse, it is parsed when a
// registry is made (NewRegistry), whatever the start runs on. Broken, it is a
// BuiltinError there, so the start fails naming it (the command exits 1) and no server
// runs; Parse and Default, which need it too, answer with it as a problem or an error,
// never a panic (TestBrokenDefaultIsAnErrorNamingIt, and the command built with it
// broken: the cli's TestBrokenDefaultBuiltin).
package scenario

import (
	"path"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Step is one status of a lifecycle, reached After the previous step: the world's own
// vocabulary (state.Step), so a scenario's steps drive deployments as they are.
type Step = state.Step

// StepError is the error a lifecycle's error step reports.
type StepError = state.ErrorInfo

// DeploymentRule replaces the deployment lifecycle for deployments it matches.
type DeploymentRule struct {
	ProjectID string            // empty: any
	Target    string            // empty: any
	Env       map[string]string // every key must have this value
	// Probability, when above 0 and below 1, is the chance the rule matches a deployment
	// its other conditions match (when.probability), drawn from the caller's source.
	// 0 means always.
	Probability float64
	Lifecycle   []Step
}

// DomainRule replaces the domain lifecycle for hostnames matching its glob.
type DomainRule struct {
	Hostname string // path.Match glob, e.g. "*.broken.test"
	// Probability, when above 0 and below 1, is the chance the rule matches a hostname
	// its glob matches (when.probability), drawn from the caller's source. 0: always.
	Probability float64
	Lifecycle   []Step
}

// Certificates says how certificates are issued and renewed.
type Certificates = state.Certificates

// RateLimits sets the rate limiter's numbers.
type RateLimits struct {
	Enabled           bool
	PerTokenPerSecond float64
	PerTokenPerMinute int
	PerIPPerSecond    float64
	Burst             time.Duration
	// PerScope replaces the per-token numbers for the tokens of a scope
	// (rate_limits.per_scope); a key it leaves out takes per_token's value.
	PerScope map[string]ScopeRate
}

// ScopeRate is one scope's per-token numbers.
type ScopeRate struct {
	PerSecond float64
	PerMinute int
}

// Uploads modes.
const (
	UploadsLenient = "lenient"
	UploadsStrict  = "strict"
)

// Scenario is a compiled, immutable scenario.
type Scenario struct {
	Name        string
	Description string
	Source      string // "builtin" or the file it came from
	// Raw is the YAML the scenario was read from, as written (a failure bundle carries
	// it, so that a replay runs the same scenario).
	Raw []byte

	Uploads             string
	DeploymentLifecycle []Step
	DeploymentRules     []DeploymentRule
	DomainLifecycle     []Step
	DomainRules         []DomainRule
	Certificates        Certificates
	RateLimits          RateLimits
	Faults              []fault.Spec

	nameLine int // where the file names it, for "defined twice" problems
}

// DeploymentSteps is DeploymentStepsFor without a random source: a rule with a
// probability below 1 never matches.
func (s *Scenario) DeploymentSteps(projectID, target string, env map[string]string) []Step {
	return s.DeploymentStepsFor(projectID, target, env, nil)
}

// DeploymentStepsFor is the lifecycle a new deployment follows: the first matching
// rule's, else the scenario's own. A rule with a probability draws from draw (numbers in
// [0, 1)) only once its other conditions match, so rules without one consume nothing; a
// nil draw never matches such a rule.
func (s *Scenario) DeploymentStepsFor(projectID, target string, env map[string]string, draw func() float64) []Step {
	for _, r := range s.DeploymentRules {
		if !r.matches(projectID, target, env) {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && (draw == nil || draw() >= r.Probability) {
			continue
		}
		return r.Lifecycle
	}
	return s.DeploymentLifecycle
}

func (r DeploymentRule) matches(projectID, target string, env map[string]string) bool {
	if r.ProjectID != "" && r.ProjectID != projectID {
		return false
	}
	if r.Target != "" && r.Target != target {
		return false
	}
	for k, v := range r.Env {
		if got, ok := env[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// DomainSteps is the lifecycle a new domain follows: the first rule whose glob matches
// the hostname (in lower case, as rules are written), else the scenario's own.
func (s *Scenario) DomainSteps(hostname string) []Step { return s.DomainStepsFor(hostname, nil) }

// DomainStepsFor is the lifecycle a new domain follows: the first matching rule's, else
// the scenario's own. A rule with a probability draws from draw (numbers in [0, 1)) only
// once its glob matches; with a nil draw such a rule never matches.
func (s *Scenario) DomainStepsFor(hostname string, draw func() float64) []Step {
	hostname = strings.ToLower(hostname)
	for _, r := range s.DomainRules {
		if ok, _ := path.Match(r.Hostname, hostname); !ok {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && (draw == nil || draw() >= r.Probability) {
			continue
		}
		return r.Lifecycle
	}
	return s.DomainLifecycle
}
