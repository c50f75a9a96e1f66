package cli

import (
	"strings"
	"testing"
)

// The pytest CI snippets of docs/mutate.md run `hostemu mutate` as pip installs it (the
// wheel's command): each such line is one mutate accepts, and finds pytest in.
func TestMutateDocPytestCommandsParse(t *testing.T) {
	n := 0
	for _, s := range yamlSnippets(t) {
		if s.file != "docs/mutate.md" && !strings.HasSuffix(s.file, "/mutate.md") {
			continue
		}
		for _, line := range strings.Split(s.text, "\n") {
			l := strings.TrimSpace(line)
			l = strings.TrimPrefix(l, "- ")
			l = strings.TrimPrefix(l, "run: ")
			rest, ok := strings.CutPrefix(l, "hostemu mutate ")
			if !ok {
				continue
			}
			rest, _, _ = strings.Cut(rest, " >") // the shell's redirection is not mutate's
			cfg, _, err := parseMutate(strings.Fields(rest))
			if err != nil {
				t.Errorf("%s:%d: hostemu mutate %s: %v", s.file, s.line, rest, err)
				continue
			}
			if cfg.Runner.Name() == "pytest" {
				n++
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d pytest mutate command lines in docs/mutate.md's CI snippets, want the GitHub and GitLab ones", n)
	}
}
