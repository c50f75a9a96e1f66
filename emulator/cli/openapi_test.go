package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings of the output
		stderr string
	}{
		{"default: hosting, YAML as written", nil, 0, []string{"openapi: 3.1.0\n", "- url: http://127.0.0.1:4700\n", "/v1/deployments:"}, ""},
		{"JSON", []string{"--format", "json"}, 0, []string{`{"openapi":"3.1.0"`, `"url":"http://127.0.0.1:4700"`}, ""},
		{"control", []string{"--control"}, 0, []string{"- url: http://127.0.0.1:4700/_emulator\n", "/clock/advance:"}, ""},
		{"public URL", []string{"--control", "--format=json", "--public-url", "https://emu.example.test/"}, 0, []string{`"url":"https://emu.example.test/_emulator/namespaces/{ns}"`}, ""},
		{"bad format", []string{"--format", "xml"}, 2, nil, "--format must be json or yaml"},
		{"unknown flag", []string{"--contrl"}, 2, nil, "unknown flag -contrl (did you mean --control?)"},
		{"argument", []string{"control"}, 2, nil, `unexpected argument "control"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := openapiCmd(tt.args, &out, &errb); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errb.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q: %.200s", want, out.String())
				}
			}
			if !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr %q, want %q", errb.String(), tt.stderr)
			}
		})
	}
}
