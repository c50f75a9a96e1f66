package scenario

import (
	"strings"
	"testing"
)

// problemsOf is every problem Parse finds in src (as s.yaml), a line each.
func problemsOf(src string) string {
	_, problems := Parse("s.yaml", []byte(src))
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// An unknown key is one problem among others: the known keys of the same element are
// checked too, and every problem comes with line:column.
func TestEveryProblemOfAnElementIsReported(t *testing.T) {
	src := `name: typos
deployments:
  lifecycle:
    - {status: queued, aftr: 1s}
    - {status: bilding}
faults:
  - match: {methd: POST, path: /v1/x}
    tims: 2
    retry_after: -1
  - match: {path: /v1/y}
    status: 999
    tims: 1
`
	all := problemsOf(src)
	for _, want := range []string{
		`s.yaml:4:24: deployments.lifecycle[0]: unknown key "aftr" (did you mean "after"?)`,
		`s.yaml:5:16: deployments.lifecycle[1].status: unknown deployment status "bilding" (did you mean "building"?)`,
		`faults[0].match: unknown key "methd" (did you mean "method"?)`,
		`faults[0]: unknown key "tims" (did you mean "times"?)`,
		`faults[0].retry_after`,
		`faults[1]: unknown key "tims"`,
		`faults[1]: status 999`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
}

// The same in the other sections: certificates, rate limits and rules.
func TestEveryProblemOfTheOtherSections(t *testing.T) {
	src := `name: typos2
certificates: {isuer: X, valid_for: -1d}
rate_limits: {enabld: true, burst: -3}
deployments:
  rules:
    - when: {projct_id: p, target: staging}
      lifecycle: [{status: queued}, {status: ready, after: 1s}]
domains:
  rules:
    - when: {hostname: "[bad", probability: 2}
      lifecycle: [{status: pending}, {status: error, after: 30s}]
`
	text := problemsOf(src)
	for _, want := range []string{`unknown key "isuer"`, `certificates.valid_for`, `unknown key "enabld"`, `rate_limits.burst`, `unknown key "projct_id"`, `target: "staging"`, `probability: 2 is out of range`, `"[bad" is not a valid glob`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}

// A header named twice in two cases is one header: a scenario's fault says so, as the
// control API does (both conditions would have to hold of one header), and a key given
// twice is refused too ("repeated"), as a JSON body's is the control API's.
func TestAHeaderNamedTwiceIsAProblem(t *testing.T) {
	src := `name: twice
faults:
  - match: {path: /v1/projects, headers: {X-Team: a, x-team: b}}
    status: 503
  - match: {path: /v1/projects, path: /v1/deployments}
    status: 503
  - match: {path: /v1/projects}
    delay: {min: 1s, mx: 2s}
  - match: {path: /v1/projects}
    delay: 30d
`
	text := problemsOf(src)
	for _, want := range []string{`match.headers "x-team": names the same header as "X-Team"; give it once`, `key "path" repeated`, `delay: unknown key "mx" (did you mean "max"?)`, `delay 720h0m0s: at most 24h0m0s`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}
