package cli

import (
	"strings"
	"testing"
)

// Every `hostemu mutate` command line of docs/mutate.md's CI snippets is one mutate
// accepts: flags that exist, values it takes, a runner it finds.
func TestMutateDocCommandsParse(t *testing.T) {
	n := 0
	for _, s := range yamlSnippets(t) {
		if s.file != "docs/mutate.md" && !strings.HasSuffix(s.file, "/mutate.md") {
			continue
		}
		text := strings.ReplaceAll(s.text, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			_, rest, ok := strings.Cut(line, "hostemu@latest mutate ")
			if !ok {
				continue
			}
			n++
			// the shell's redirection is not mutate's
			rest, _, _ = strings.Cut(rest, " >")
			if _, _, err := parseMutate(strings.Fields(rest)); err != nil {
				t.Errorf("%s:%d: hostemu mutate %s: %v", s.file, s.line, rest, err)
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d mutate command lines in docs/mutate.md's CI snippets, want the GitHub and GitLab ones", n)
	}
}
