package scenario_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

func mustParse(tb testing.TB, file, text string) *scenario.Scenario {
	tb.Helper()
	s, problems := scenario.Parse(file, []byte(text))
	if len(problems) > 0 || s == nil {
		tb.Fatalf("Parse(%s): %v", file, problems)
	}
	return s
}

// productExample is the scenario example of docs/scenarios.md, verbatim.
const productExample = `name: slow-builds
description: Builds take a minute; production builds of prj_flaky fail.
deployments:
  uploads: lenient           # or strict (missing_files)
  lifecycle:                 # from creation; each ` + "`after`" + ` counts from the previous step
    - status: queued
    - status: building
      after: 5s
    - status: ready
      after: 60s
  rules:                     # the first rule whose ` + "`when`" + ` matches replaces ` + "`lifecycle`" + `
    - when: {project_id: prj_flaky, target: production}   # also: env: {KEY: value}
      lifecycle:
        - status: queued
        - status: building
          after: 5s
        - status: error
          after: 20s
          error: {code: build_failed, message: "npm run build exited with 1"}
domains:
  lifecycle:
    - status: pending
    - status: verifying
      after: 2s
    - status: active
      after: 10s
  rules:
    - when: {hostname: "*.broken.test"}
      lifecycle: [{status: pending}, {status: error, after: 30s}]
certificates:                # issued when the domain turns active
  issuer: hostemu Test CA
  valid_for: 90d
  renew_before: 30d
rate_limits:
  enabled: true
  per_token: {per_second: 100, per_minute: 5000}
  per_ip: {per_second: 10}
  burst: 30s
faults: []                   # the same objects as POST /_emulator/faults
`

func TestParseProductExample(t *testing.T) {
	s := mustParse(t, "scenarios/slow-builds.yaml", productExample)
	if s.Name != "slow-builds" || s.Source != "scenarios/slow-builds.yaml" {
		t.Errorf("name %q source %q", s.Name, s.Source)
	}
	flaky := s.DeploymentSteps("prj_flaky", "production", nil)
	if got := statuses(flaky); !reflect.DeepEqual(got, []string{"queued", "building", "error"}) {
		t.Fatalf("prj_flaky production: %v", got)
	}
	if e := flaky[2].Error; e == nil || *e != (scenario.StepError{Code: "build_failed", Message: "npm run build exited with 1"}) || flaky[2].After != 20*time.Second {
		t.Errorf("error step %+v", flaky[2])
	}
	for _, c := range [][2]string{{"prj_flaky", "preview"}, {"prj_other", "production"}} {
		steps := s.DeploymentSteps(c[0], c[1], nil)
		if steps[2].Status != "ready" || steps[2].After != time.Minute {
			t.Errorf("%v: %+v", c, steps)
		}
	}
	broken := s.DomainSteps("app.broken.test")
	if len(broken) != 2 || broken[1].Status != "error" || broken[1].After != 30*time.Second || broken[1].Error != nil || broken[0].After != 0 {
		t.Errorf("*.broken.test: %+v", broken)
	}
	if got := statuses(s.DomainSteps("broken.test")); !reflect.DeepEqual(got, []string{"pending", "verifying", "active"}) {
		t.Errorf("broken.test: %v", got)
	}
}

func TestParseMergesDefault(t *testing.T) {
	def := mustDefault(t)
	tests := []struct {
		name  string
		text  string
		check func(t *testing.T, s *scenario.Scenario)
	}{
		{"nothing but a name", "name: bare\n", func(t *testing.T, s *scenario.Scenario) {
			want := exported(def)
			want.Name, want.Description, want.Source = "bare", "", "dir/file.yaml"
			if !reflect.DeepEqual(exported(s), want) {
				t.Errorf("got %+v\nwant %+v", exported(s), want)
			}
		}},
		{"name from the file", "description: no name\n", func(t *testing.T, s *scenario.Scenario) {
			if s.Name != "file" {
				t.Errorf("name %q, want the file's base name", s.Name)
			}
		}},
		{"rules only keep the default lifecycle", "deployments:\n  rules:\n    - when: {target: preview}\n      lifecycle: [{status: queued}, {status: building}, {status: error}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if !reflect.DeepEqual(s.DeploymentLifecycle, def.DeploymentLifecycle) || s.Uploads != def.Uploads {
					t.Errorf("lifecycle %+v uploads %q", s.DeploymentLifecycle, s.Uploads)
				}
				if got := statuses(s.DeploymentSteps("p", "preview", nil)); !reflect.DeepEqual(got, []string{"queued", "building", "error"}) {
					t.Errorf("preview: %v", got)
				}
			}},
		{"uploads only", "deployments: {uploads: strict}\n", func(t *testing.T, s *scenario.Scenario) {
			if s.Uploads != scenario.UploadsStrict || !reflect.DeepEqual(s.DeploymentLifecycle, def.DeploymentLifecycle) {
				t.Errorf("%+v", s)
			}
		}},
		{"domain lifecycle only", "domains:\n  lifecycle: [{status: pending}]\n", func(t *testing.T, s *scenario.Scenario) {
			if got := statuses(s.DomainLifecycle); !reflect.DeepEqual(got, []string{"pending"}) || !reflect.DeepEqual(s.DeploymentLifecycle, def.DeploymentLifecycle) {
				t.Errorf("domains %v", got)
			}
		}},
		{"certificate keys one by one", "certificates: {issuer: My CA}\n", func(t *testing.T, s *scenario.Scenario) {
			want := def.Certificates
			want.Issuer = "My CA"
			if s.Certificates != want {
				t.Errorf("%+v", s.Certificates)
			}
		}},
		{"rate limit keys one by one", "rate_limits:\n  per_token: {per_second: 7}\n  burst: 0s\n", func(t *testing.T, s *scenario.Scenario) {
			want := def.RateLimits
			want.PerTokenPerSecond, want.Burst = 7, 0
			if !reflect.DeepEqual(s.RateLimits, want) {
				t.Errorf("%+v, want %+v", s.RateLimits, want)
			}
		}},
		{"rate limits off", "rate_limits: {enabled: false}\n", func(t *testing.T, s *scenario.Scenario) {
			if s.RateLimits.Enabled || s.RateLimits.PerTokenPerSecond != 100 {
				t.Errorf("%+v", s.RateLimits)
			}
		}},
		{"faults replace", "faults:\n  - {status: 500, times: 1}\n  - {drop: true, match: {method: POST, path: /v1/deployments}}\n  - {delay: 1s}\n",
			func(t *testing.T, s *scenario.Scenario) {
				if len(s.Faults) != 3 || s.Faults[0].Status != 500 || s.Faults[0].Times != 1 || !s.Faults[1].Drop ||
					s.Faults[1].Match.Method != "POST" || s.Faults[2].Delay.Min != time.Second || s.Faults[2].Delay.Max != time.Second {
					t.Errorf("%+v", s.Faults)
				}
			}},
		{"rate_limit and timeout faults", "faults: [{rate_limit: true, probability: 0}, {timeout: true, match: {service: cipher, scope: read}}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if !s.Faults[0].RateLimit || *s.Faults[0].Probability != 0 || !s.Faults[1].Timeout || s.Faults[1].Match.Scope != "read" {
					t.Errorf("%+v", s.Faults)
				}
			}},
		{"error step without error", "deployments:\n  lifecycle: [{status: queued}, {status: building}, {status: error}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if s.DeploymentLifecycle[2].Error != nil || s.DeploymentLifecycle[1].After != 0 {
					t.Errorf("%+v", s.DeploymentLifecycle)
				}
			}},
		{"error message only takes the default code", "domains:\n  lifecycle: [{status: pending}, {status: error, error: {message: nope}}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if e := s.DomainLifecycle[1].Error; e == nil || *e != (scenario.StepError{Code: "verification_failed", Message: "nope"}) {
					t.Errorf("%+v", e)
				}
			}},
		{"ready may turn error", "deployments:\n  lifecycle: [{status: queued}, {status: building}, {status: ready, after: 1s}, {status: error, after: 1h}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if got := statuses(s.DeploymentLifecycle); !reflect.DeepEqual(got, []string{"queued", "building", "ready", "error"}) {
					t.Errorf("%v", got)
				}
			}},
		{"first step may say after: 0s", "deployments:\n  lifecycle: [{status: queued, after: 0s}, {status: building}, {status: error}]\n", func(t *testing.T, s *scenario.Scenario) {}},
		{"anchors and merge keys", `domains:
  lifecycle: &slow
    - status: pending
    - status: verifying
      after: 1m
    - status: active
  rules:
    - when: {hostname: a.test}
      lifecycle: *slow
rate_limits:
  per_token: &pt {per_second: 5, per_minute: 50}
  per_ip:
    per_second: 3
`, func(t *testing.T, s *scenario.Scenario) {
			if !reflect.DeepEqual(s.DomainSteps("a.test"), s.DomainLifecycle) || s.RateLimits.PerTokenPerMinute != 50 || s.RateLimits.PerIPPerSecond != 3 {
				t.Errorf("%+v", s)
			}
		}},
		{"merge key", "certificates:\n  <<: {issuer: Merged CA, valid_for: 10d}\n  renew_before: 1d\n", func(t *testing.T, s *scenario.Scenario) {
			if s.Certificates != (scenario.Certificates{Issuer: "Merged CA", ValidFor: 10 * day, RenewBefore: day}) {
				t.Errorf("%+v", s.Certificates)
			}
		}},
		{"rules that do not shadow each other", `deployments:
  rules:
    - when: {target: production}
      lifecycle: [{status: queued}, {status: building}, {status: ready}]
    - when: {project_id: prj_a}
      lifecycle: [{status: queued}, {status: building}, {status: ready}]
    - when: {env: {A: "1"}}
      lifecycle: [{status: queued}, {status: building}, {status: ready}]
    - when: {env: {A: "2"}, project_id: prj_b}
      lifecycle: [{status: queued}, {status: building}, {status: ready}]
    - when: {}
      lifecycle: [{status: queued}, {status: building}, {status: ready}]
domains:
  rules:
    - when: {hostname: "*.b.test"}
      lifecycle: [{status: pending}]
    - when: {hostname: "b.test"}
      lifecycle: [{status: pending}]
    - when: {hostname: "?.test"}
      lifecycle: [{status: pending}]
    - when: {hostname: "*.test"}
      lifecycle: [{status: pending}]
    - when: {}
      lifecycle: [{status: pending}]
`, func(t *testing.T, s *scenario.Scenario) {
			if len(s.DeploymentRules) != 5 || len(s.DomainRules) != 5 {
				t.Errorf("%d %d rules", len(s.DeploymentRules), len(s.DomainRules))
			}
			if got := statuses(s.DomainSteps("anything.example")); !reflect.DeepEqual(got, []string{"pending"}) {
				t.Errorf("empty when should match every hostname: %v", got)
			}
		}},
		{"env values are text", "deployments:\n  rules:\n    - when: {env: {PORT: 3000, DEBUG: true}}\n      lifecycle: [{status: queued}, {status: building}, {status: ready}]\n",
			func(t *testing.T, s *scenario.Scenario) {
				if !reflect.DeepEqual(s.DeploymentRules[0].Env, map[string]string{"PORT": "3000", "DEBUG": "true"}) {
					t.Errorf("%v", s.DeploymentRules[0].Env)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, mustParse(t, "dir/file.yaml", strings.ReplaceAll(tt.text, "bare", "bare")))
		})
	}
	if s := mustParse(t, "x/bare.yml", "description: d\n"); s.Name != "bare" {
		t.Errorf("name from .yml file: %q", s.Name)
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
		want       string
	}{
		{"empty file", "", 1, "empty file"},
		{"only comments", "# nothing\n\n", 1, "empty file"},
		{"syntax error", "name: x\ndescription: y\n  bad: indent\n", 3, "invalid YAML"},
		{"unclosed flow", "name: x\ndeployments:\n  lifecycle: [{status: queued\n", 3, "invalid YAML"},
		{"unclosed flow on line 1", "[a, b\n\n", 2, "invalid YAML"},
		{"too many domain steps", "domains:\n  lifecycle: [{status: pending}, {status: verifying}, {status: pending}, {status: verifying}, {status: pending}, {status: verifying}, {status: pending}, {status: verifying}, {status: pending}, {status: verifying}, {status: active}]\n", 2, "at most 9 steps (verifying goes back to pending at most 3 times)"},
		{"domain active then more", "domains:\n  lifecycle: [{status: pending}, {status: verifying}, {status: active}, {status: error}]\n", 2, "active is final"},
		{"too many deployment steps", "deployments:\n  lifecycle: [{status: queued}, {status: building}, {status: ready}, {status: error}, {status: error}]\n", 2, "at most 4 steps"},
		{"block not closed", "name: x\ndeployments:\n  lifecycle:\n   - status: queued\n  - status: x\n", 3, "invalid YAML"},
		{"unknown anchor", "name: x\n\ndescription: *nope\n", 3, "unknown anchor"},
		{"tab", "name: x\n\tdescription: y\n", 2, "invalid YAML"},
		{"two documents", "name: x\n---\nname: y\n", 2, "second YAML document"},
		{"not a mapping", "- name: x\n", 1, "got a list"},
		{"unknown top-level key", "name: x\nfoo: 1\n", 2, `unknown key "foo"`},
		{"misspelt key", "name: x\ndeployments:\n  lifecyle: []\n", 3, `did you mean "lifecycle"`},
		{"repeated key", "name: x\nname: y\n", 2, `key "name" repeated (first at line 1)`},
		{"empty name", "name: \"\"\n", 1, "name: empty"},
		{"null name", "name:\n", 1, "name: want a string"},
		{"description a list", "description: [a]\n", 1, "description: want a string, got a list"},
		{"section of wrong type", "name: x\ndeployments: []\n", 2, "deployments: want a mapping"},
		{"lifecycle not a list", "deployments:\n  lifecycle: fast\n", 2, `want a list, got "fast"`},
		{"deployment left building", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n      after: 1s\n", 4, "ends at building: a deployment lifecycle ends with ready or error"},
		{"deployment left queued", "deployments:\n  rules:\n    - when: {target: preview}\n      lifecycle: [{status: queued}]\n", 4, "ends at queued"},
		{"domain left verifying", "domains:\n  lifecycle: [{status: pending}, {status: verifying}]\n", 2, "ends at verifying: a domain lifecycle ends with active or error"},
		{"empty lifecycle", "deployments:\n  lifecycle: []\n", 2, "empty; a deployment lifecycle starts with queued"},
		{"unknown step key", "deployments:\n  lifecycle:\n    - status: queued\n      afer: 1s\n", 4, `unknown key "afer" (did you mean "after"?)`},
		{"step without status", "deployments:\n  lifecycle:\n    - after: 1s\n", 3, "missing status"},
		{"unknown deployment status", "deployments:\n  lifecycle:\n    - status: queued\n    - status: done\n", 4, `unknown deployment status "done"`},
		{"misspelt deployment status", "deployments:\n  lifecycle:\n    - status: queued\n    - status: buidling\n", 4, `unknown deployment status "buidling" (did you mean "building"?)`},
		{"misspelt uploads", "deployments:\n  uploads: strcit\n", 2, `(did you mean "strict"?)`},
		{"misspelt target", "deployments:\n  rules:\n    - when: {target: preveiw}\n      lifecycle: [{status: queued}]\n", 3, `(did you mean "preview"?)`},
		{"unknown domain status", "domains:\n  lifecycle:\n    - status: pending\n    - status: ready\n", 4, `unknown domain status "ready"`},
		{"deployment starts elsewhere", "deployments:\n  lifecycle: [{status: building}, {status: ready}]\n", 2, "starts with queued"},
		{"domain starts elsewhere", "domains:\n  lifecycle:\n    - status: verifying\n", 3, "starts with pending"},
		{"first step waits", "deployments:\n  lifecycle:\n    - status: queued\n      after: 1s\n", 4, "first step is the status at creation"},
		{"skipped step", "deployments:\n  lifecycle:\n    - status: queued\n    - status: ready\n", 4, "ready cannot follow queued"},
		{"repeated step", "deployments:\n  lifecycle:\n    - status: queued\n    - status: queued\n", 4, "queued cannot follow queued"},
		{"after error", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n    - status: error\n    - status: ready\n", 6, "error is final"},
		{"domain skips verifying", "domains:\n  lifecycle:\n    - status: pending\n    - status: active\n", 4, "active cannot follow pending"},
		{"active then error", "domains:\n  lifecycle: [{status: pending}, {status: verifying}, {status: active}]\n  rules:\n    - when: {}\n      lifecycle: [{status: pending}, {status: active}]\n", 5, "active cannot follow pending"},
		{"error then error", "domains:\n  lifecycle:\n    - status: pending\n    - status: error\n    - status: error\n", 5, "error is final"},
		{"queued to error", "deployments:\n  lifecycle: [{status: queued}, {status: error}]\n", 2, "error cannot follow queued"},
		{"error on a ready step", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n    - status: ready\n      error: {code: x}\n", 6, "only an error step carries error"},
		{"error code not snake", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n    - status: error\n      error:\n        code: BuildFailed\n", 7, "want snake_case"},
		{"error unknown key", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n    - status: error\n      error:\n        code: x\n        reason: y\n", 8, `unknown key "reason"`},
		{"duration without unit", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n      after: 5\n", 5, `invalid duration "5"`},
		{"negative duration", "deployments:\n  lifecycle:\n    - status: queued\n    - status: building\n      after: -5s\n", 5, "negative duration"},
		{"duration too long", "domains:\n  lifecycle:\n    - status: pending\n    - status: verifying\n      after: 99999999999d\n", 5, "out of range: want from 0s to 3650d"},
		{"duration a list", "rate_limits:\n  burst: [1s]\n", 2, "burst: want a duration"},
		{"uploads", "deployments:\n  uploads: sloppy\n", 2, `"sloppy": want lenient or strict`},
		{"target", "deployments:\n  rules:\n    - when: {target: staging}\n      lifecycle: [{status: queued}]\n", 3, `"staging": want production or preview`},
		{"unknown when key", "deployments:\n  rules:\n    - when:\n        project: prj_a\n      lifecycle: [{status: queued}]\n", 4, `unknown key "project"`},
		{"empty project_id", "deployments:\n  rules:\n    - when: {project_id: \"\"}\n      lifecycle: [{status: queued}]\n", 3, "project_id: empty"},
		{"env not a mapping", "deployments:\n  rules:\n    - when: {env: [A]}\n      lifecycle: [{status: queued}]\n", 3, "env: want a mapping"},
		{"env value null", "deployments:\n  rules:\n    - when:\n        env:\n          A:\n      lifecycle: [{status: queued}]\n", 5, "env.A: want a string"},
		// a name no deployment's env can hold never matches: a typo that makes a test pass
		{"env name with a dash", "deployments:\n  rules:\n    - when:\n        env:\n          FEATURE-X: \"on\"\n      lifecycle: [{status: queued}]\n", 5,
			`deployments.rules[0].when.env: "FEATURE-X" is not a variable name (letters, digits and underscores, not starting with a digit)`},
		{"env name with =", "deployments:\n  rules:\n    - when: {env: {\"A=B\": \"1\"}}\n      lifecycle: [{status: queued}]\n", 3, `"A=B" is not a variable name`},
		{"env name from a digit", "deployments:\n  rules:\n    - when: {env: {1X: \"1\"}}\n      lifecycle: [{status: queued}]\n", 3, `"1X" is not a variable name`},
		{"env name in JSON", `{"deployments":{"rules":[{"when":{"env":{"feature x":"on"}},"lifecycle":[{"status":"queued"}]}]}}`, 1, `"feature x" is not a variable name`},
		{"rule without lifecycle", "deployments:\n  rules:\n    - when: {target: preview}\n", 3, "missing lifecycle"},
		{"rule without when", "domains:\n  rules:\n    - lifecycle: [{status: pending}]\n", 3, "missing when"},
		{"rule lifecycle checked", "deployments:\n  rules:\n    - when: {target: preview}\n      lifecycle:\n        - status: building\n", 5, "starts with queued"},
		{"empty when shadows later rules", "deployments:\n  rules:\n    - when: {}\n      lifecycle: [{status: queued}]\n    - when: {target: production}\n      lifecycle: [{status: queued}]\n", 5, "never matches: the rule at line 3 comes first"},
		{"broader rule first", "deployments:\n  rules:\n    - when: {project_id: a}\n      lifecycle: [{status: queued}]\n    - when: {project_id: a, target: preview}\n      lifecycle: [{status: queued}]\n", 5, "never matches"},
		{"env subset first", "deployments:\n  rules:\n    - when: {env: {A: \"1\"}}\n      lifecycle: [{status: queued}]\n    - when: {env: {A: \"1\", B: \"2\"}}\n      lifecycle: [{status: queued}]\n", 5, "never matches"},
		{"identical when", "deployments:\n  rules:\n    - when: {target: preview}\n      lifecycle: [{status: queued}]\n    - when: {target: preview}\n      lifecycle: [{status: queued}]\n", 5, "the rule at line 3 has the same when"},
		{"bad glob", "domains:\n  rules:\n    - when: {hostname: \"[a-\"}\n      lifecycle: [{status: pending}]\n", 3, "not a valid glob"},
		{"upper-case glob", "domains:\n  rules:\n    - when: {hostname: \"*.Broken.test\"}\n      lifecycle: [{status: pending}]\n", 3, "lower case"},
		{"empty hostname", "domains:\n  rules:\n    - when: {hostname: \"\"}\n      lifecycle: [{status: pending}]\n", 3, "hostname: empty"},
		{"glob shadows glob", "domains:\n  rules:\n    - when: {hostname: \"*.test\"}\n      lifecycle: [{status: pending}]\n    - when: {hostname: \"*.broken.test\"}\n      lifecycle: [{status: pending}]\n", 5, "never matches"},
		{"glob shadows hostname", "domains:\n  rules:\n    - when: {hostname: \"*.b.test\"}\n      lifecycle: [{status: pending}]\n    - when: {hostname: x.b.test}\n      lifecycle: [{status: pending}]\n", 5, "never matches"},
		{"empty domain when first", "domains:\n  rules:\n    - when: {}\n      lifecycle: [{status: pending}]\n    - when: {hostname: x.test}\n      lifecycle: [{status: pending}]\n", 5, "never matches"},
		{"enabled not a bool", "rate_limits:\n  enabled: maybe\n", 2, "want true or false"},
		{"per_second as text", "rate_limits:\n  per_token:\n    per_second: \"100\"\n", 3, "want a number"},
		{"per_second zero", "rate_limits:\n  per_ip: {per_second: 0}\n", 2, "per_second: 0 is out of range: want a number more than 0 and at most 1000000000"},
		{"per_second negative", "rate_limits:\n  per_token: {per_second: -1}\n", 2, "per_second: -1 is out of range: want a number more than 0 and at most 1000000000"},
		{"per_second not finite", "rate_limits:\n  per_token: {per_second: .inf}\n", 2, "want a number"},
		{"per_minute fraction", "rate_limits:\n  per_token: {per_minute: 1.5}\n", 2, "want a whole number"},
		{"per_minute zero", "rate_limits:\n  per_token:\n    per_minute: 0\n", 3, "per_minute: 0 is out of range: want a whole number from 1 to 2147483647"},
		{"per_scope unknown scope", "rate_limits:\n  per_scope:\n    deplyo: {per_second: 1}\n", 3, `unknown key "deplyo" (did you mean "deploy"?)`},
		{"per_scope zero", "rate_limits:\n  per_scope:\n    deploy: {per_second: 0}\n", 3, "rate_limits.per_scope.deploy.per_second: 0 is out of range"},
		{"unknown rate limit key", "rate_limits:\n  per_ip: {per_minute: 10}\n", 2, `unknown key "per_minute"`},
		{"negative burst", "rate_limits:\n  burst: -1s\n", 2, "negative duration"},
		{"valid_for zero", "certificates:\n  valid_for: 0s\n", 2, "valid_for: 0s is out of range: want more than 0s and at most 3650d"},
		{"renew_before too long", "certificates:\n  valid_for: 10d\n", 2, "renew_before (30d) must be less than valid_for (10d)"},
		{"renew_before equal", "certificates:\n  valid_for: 10d\n  renew_before: 240h\n", 3, "must be less than valid_for"},
		{"renewal error without fail", "certificates:\n  renewal:\n    error: {code: x}\n", 3, "only a failing renewal (fail: true) carries error"},
		{"renewal unknown key", "certificates:\n  renewal: {fial: true}\n", 2, `unknown key "fial" (did you mean "fail"?)`},
		{"empty issuer", "certificates:\n  issuer: \" \"\n", 2, "issuer: empty"},
		{"lifecycle with no value", "deployments:\n  lifecycle:\n", 2, "empty; a deployment lifecycle starts with queued"},
		{"fault not a mapping", "faults:\n  - 503\n", 2, "faults[0]: want a mapping"},
		{"fault unknown key", "faults:\n  - status: 503\n    retries: 2\n", 3, `faults[0]: unknown key "retries"`},
		{"fault unknown match key", "faults:\n  - match: {methd: GET}\n    status: 503\n", 2, `faults[0].match: unknown key "methd" (did you mean "method"?)`},
		{"fault without action", "name: x\nfaults:\n  - match: {path: /v1/*}\n", 3, "a fault needs an action"},
		{"fault status 200", "faults:\n  - status: 200\n", 2, "want an error status"},
		{"fault status text", "faults:\n  - status: \"503\"\n", 2, "status: want a whole number"},
		{"fault probability", "faults:\n  - status: 503\n    probability: 1.5\n", 3, "want a number from 0 to 1"},
		{"fault probability NaN", "faults:\n  - status: 503\n    probability: .nan\n", 3, "probability: want a number"},
		{"fault bad delay", "faults:\n  - delay: fast\n", 2, `invalid duration "fast"`},
		{"fault half a range", "faults:\n  - delay:\n      min: 1s\n", 3, "needs both min and max"},
		{"fault delay unknown key", "faults:\n  - delay: {min: 1s, max: 2s, mean: 1s}\n", 2, `unknown key "mean"`},
		{"fault delay backwards", "faults:\n  - delay: {min: 2s, max: 1s}\n", 2, "max is less than min"},
		{"fault bool", "faults:\n  - drop: 1\n", 2, "drop: want true or false"},
		{"fault two actions", "faults:\n  - {status: 503, drop: true}\n", 2, "exclude each other"},
		{"fault method misspelt", "faults:\n  - status: 503\n    match: {method: PSOT}\n", 2, `match.method "PSOT": unknown method (did you mean "POST"?)`},
		{"fault after negative", "faults:\n  - {status: 503, after: -1}\n", 2, "after: -1 is out of range"},
		{"fault from not an instant", "faults:\n  - status: 503\n    from: tomorrow\n", 3, `from: "tomorrow": want an RFC 3339 instant`},
		{"fault window backwards", "faults:\n  - {status: 503, from: \"2030-01-01T00:02:00Z\", until: \"2030-01-01T00:01:00Z\"}\n", 2, "until must be later than from"},
		{"fault for with from", "faults:\n  - {status: 503, for: 2m, from: \"2030-01-01T00:00:00Z\"}\n", 2, "for excludes from and until"},
		{"fault service", "faults:\n  - {status: 503, match: {service: dns}}\n", 2, "want hosting, cipher or edge"},
		{"key not a word", "name: x\n[a]: 1\n", 2, "keys must be plain words"},
		{"alias bomb", aliasBomb, 1, "too many aliases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, problems := scenario.Parse("s.yaml", []byte(tt.text))
			if s != nil {
				t.Fatalf("parsed %+v; want a problem", s)
			}
			for _, p := range problems {
				if p.File != "s.yaml" || p.Line < 1 {
					t.Errorf("problem %+v: want file s.yaml and a line", p)
				}
				if strings.Contains(p.Message, tt.want) && (p.Line == tt.line || tt.name == "alias bomb") {
					return
				}
			}
			t.Errorf("problems %v\nwant line %d: ...%s...", problems, tt.line, tt.want)
		})
	}
}

// aliasBomb doubles its size at each level through merge keys, a billion laughs.
var aliasBomb = func() string {
	var b strings.Builder
	b.WriteString("name: bomb\nfaults:\n  - &f0 {status: 503}\n")
	for i := 1; i < 40; i++ {
		n, prev := strconv.Itoa(i), strconv.Itoa(i-1)
		b.WriteString("  - &f" + n + " {<<: [*f" + prev + ", *f" + prev + ", *f" + prev + ", *f" + prev + "]}\n")
	}
	return b.String()
}()

// rate_limits.per_scope gives one scope its own numbers; a key it leaves out takes
// per_token's.
func TestParsePerScope(t *testing.T) {
	s := mustParse(t, "s.yaml", "rate_limits:\n  per_token: {per_second: 50, per_minute: 900}\n  per_scope:\n    deploy: {per_second: 1}\n")
	want := map[string]scenario.ScopeRate{"deploy": {PerSecond: 1, PerMinute: 900}}
	if !reflect.DeepEqual(s.RateLimits.PerScope, want) {
		t.Errorf("per_scope %+v, want %+v", s.RateLimits.PerScope, want)
	}
}

// A fault's after, from, until and for are read into fault.Spec for the engine.
func TestParseFaultWindow(t *testing.T) {
	s := mustParse(t, "s.yaml", "faults:\n  - {match: {method: POST, path: /v1/deployments/*/promote}, status: 503, for: 2m}\n  - {status: 500, after: 3, times: 2, from: \"2030-01-01T00:00:00Z\", until: \"2030-01-01T00:02:00Z\"}\n")
	if f := s.Faults[0]; time.Duration(f.For) != 2*time.Minute {
		t.Errorf("for: %+v", f)
	}
	from := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if f := s.Faults[1]; f.After != 3 || f.Times != 2 || !f.From.Equal(from) || !f.Until.Equal(from.Add(2*time.Minute)) {
		t.Errorf("after/times/from/until: %+v", f)
	}
}

// A key with no value is the empty list or mapping, in a scenario as in a fixture
// (yamlcheck.EmptyKey; issue 19): faults: is no faults, deployments: the defaults.
func TestParseEmptyKey(t *testing.T) {
	s := mustParse(t, "s.yaml", "faults:\ndeployments:\ndomains:\n  rules:\n")
	if len(s.Faults) != 0 || len(s.DomainRules) != 0 || len(s.DeploymentLifecycle) == 0 {
		t.Errorf("%+v", s)
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	text := "name: x\nfoo: 1\ndeployments:\n  uploads: sloppy\ncertificates:\n  valid_for: 0s\n"
	_, problems := scenario.Parse("s.yaml", []byte(text))
	var lines []int
	for _, p := range problems {
		lines = append(lines, p.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 4, 6}) {
		t.Errorf("problems %v: want one each at lines 2, 4 and 6", problems)
	}
}

func TestProblemString(t *testing.T) {
	if got := (scenario.Problem{File: "a.yaml", Line: 3, Message: "bad"}).String(); got != "a.yaml:3: bad" {
		t.Errorf("%q", got)
	}
	if got := (scenario.Problem{File: "a.yaml", Message: "unreadable"}).String(); got != "a.yaml: unreadable" {
		t.Errorf("%q", got)
	}
}
