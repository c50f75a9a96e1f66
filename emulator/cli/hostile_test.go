package cli

import (
	"bytes"
	"context"
	"testing"
)

// A bad --format or --namespaces says what it wants once, with a "did you mean" only
// for a near miss: not "want text, json, markdown or junit (want text, json, markdown,
// junit)".
func TestCoverageBadValueIsSaidOnce(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for args, want := range map[string]string{
		"--format=xml":      "hostemu coverage: --format \"xml\": want text, json, markdown or junit\n",
		"--format=jsn":      "hostemu coverage: --format \"jsn\": want text, json, markdown or junit (did you mean \"json\"?)\n",
		"--namespaces=some": "hostemu coverage: --namespaces \"some\": the only value is \"all\"\n",
		"--namespaces=al":   "hostemu coverage: --namespaces \"al\": the only value is \"all\" (did you mean \"all\"?)\n",
	} {
		var out, errb bytes.Buffer
		if code := coverageCmd(context.Background(), []string{args}, getenv, &out, &errb); code != 2 || errb.String() != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", args, code, errb.String(), want)
		}
	}
}
