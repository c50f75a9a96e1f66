package scenario_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// TestOutOfRangeNamesTheRange: a number outside what a key allows says what it allows.
func TestOutOfRangeNamesTheRange(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"rate_limits:\n  per_ip: {per_second: 0}\n", "rate_limits.per_ip.per_second: 0 is out of range: want a number more than 0 and at most 1000000000"},
		{"rate_limits:\n  per_ip: {per_second: 2e9}\n", "rate_limits.per_ip.per_second: 2e+09 is out of range: want a number more than 0 and at most 1000000000"},
		{"rate_limits:\n  per_token: {per_minute: 0}\n", "rate_limits.per_token.per_minute: 0 is out of range: want a whole number from 1 to 2147483647"},
		{"rate_limits:\n  per_token: {per_minute: 3000000000}\n", "rate_limits.per_token.per_minute: 3000000000 is out of range: want a whole number from 1 to 2147483647"},
		{"rate_limits:\n  per_token: {per_minute: 99999999999999999999}\n", "rate_limits.per_token.per_minute: 99999999999999999999 is out of range: want a whole number from 1 to 2147483647"},
		{"rate_limits:\n  burst: 4000d\n", `rate_limits.burst: duration "4000d" is out of range: want from 0s to 3650d`},
		{"rate_limits:\n  burst: -1s\n", `rate_limits.burst: negative duration "-1s" is out of range: want from 0s to 3650d`},
		{"certificates:\n  valid_for: 0s\n", "certificates.valid_for: 0s is out of range: want more than 0s and at most 3650d"},
		{"faults:\n  - {status: 503, probability: 1.5}\n", "faults[0].probability: 1.5 is out of range: want a number from 0 to 1"},
		{"faults:\n  - {status: 503, times: -1}\n", "faults[0].times: -1 is out of range: want a whole number from 0 to 2147483647"},
		{"faults:\n  - {status: 200}\n", "faults[0]: status 200: want an error status from 400 to 599"},
	}
	for _, tt := range tests {
		_, problems := scenario.Parse("s.yaml", []byte(tt.yaml))
		if len(problems) != 1 || problems[0].Message != tt.want || problems[0].Line != 2 {
			t.Errorf("%q:\n got %v\nwant s.yaml:2: %s", tt.yaml, problems, tt.want)
		}
	}
}
