package cli

import (
	"strings"
	"testing"
)

// mutate's flags are strict: a list entry, a glob included, that names nothing is an
// error naming the closest, and so is an unknown flag.
func TestMutateFlagsStrict(t *testing.T) {
	for _, tc := range []struct {
		args string
		err  string // "" parses
	}{
		{"--operations createDeployment,list* -- go test ./...", ""},
		{"--codes service_*,reset -- go test ./...", ""},
		{"--operations creatDeployment -- go test ./...", `"creatDeployment" is not one (did you mean "createDeployment"?)`},
		{"--operations createDeployment,lst* -- go test ./...", `--operations: "lst*" matches none`},
		{"--codes servce_* -- go test ./...", `--codes: "servce_*" matches none`},
		{"--operation createDeployment -- go test ./...", `unknown flag -operation (did you mean --operations?)`},
		{"--test TestA -- go test ./...", `unknown flag -test (did you mean --tests?)`},
		{"--xyzzy -- go test ./...", `unknown flag -xyzzy (see hostemu mutate -h)`},
	} {
		_, _, err := parseMutate(strings.Fields(tc.args))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %s", tc.args, err, tc.err)
		}
	}
}
