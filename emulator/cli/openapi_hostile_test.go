package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A --public-url serve would refuse is refused here too, naming the flag, rather than
// written into the description's servers; an unknown flag names the closest one, as
// serve's do.
func TestCommandRefusesBadValues(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--public-url", "x"}, `hostemu openapi: invalid --public-url "x": want an absolute http:// or https:// URL`},
		{[]string{"--public-url", "ftp://emu.test"}, `invalid --public-url "ftp://emu.test"`},
		{[]string{"--public-url", "https://emu.test/?q=1"}, `invalid --public-url "https://emu.test/?q=1": want a base URL without user, query or fragment`},
		{[]string{"--controll"}, "hostemu openapi: unknown flag -controll (did you mean --control?)"},
	} {
		var out, errb bytes.Buffer
		if code := openapiCmd(tt.args, &out, &errb); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%q: exit %d, %d bytes out, stderr %q; want 2 and %q", tt.args, code, out.Len(), errb.String(), tt.stderr)
		}
	}
}

// The URL goes into the servers as serve keeps it: its trailing slashes stripped.
func TestCommandPublicURLAsServeKeepsIt(t *testing.T) {
	var out, errb bytes.Buffer
	if code := openapiCmd([]string{"--format", "json", "--public-url", "https://emu.test/base//"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"url":"https://emu.test/base"`) {
		t.Errorf("servers do not name https://emu.test/base: %.300s", out.String())
	}
}
