package cli

import (
	"strings"
	"testing"
)

// mutateDocCommand is a `hostemu mutate` command line of docs/mutate.md's CI snippets:
// how hostemu is run (go for go run …/cmd/hostemu@latest, npx for npm's, pip for the
// wheel's command) and mutate's arguments.
type mutateDocCommand struct {
	file string
	line int
	how  string
	rest string
}

// mutateDocCommands are the `hostemu mutate` command lines of docs/mutate.md's CI
// snippets, a line continued with "\" joined to the next.
func mutateDocCommands(t *testing.T) []mutateDocCommand {
	t.Helper()
	var out []mutateDocCommand
	for _, s := range yamlSnippets(t) {
		if s.file != "docs/mutate.md" && !strings.HasSuffix(s.file, "/mutate.md") {
			continue
		}
		text := strings.ReplaceAll(s.text, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			how := "go"
			_, rest, ok := strings.Cut(line, "hostemu@latest mutate ")
			if !ok {
				how = "npx"
				_, rest, ok = strings.Cut(line, "npx hostemu mutate ")
			}
			if !ok {
				how = "pip"
				l := strings.TrimPrefix(strings.TrimSpace(line), "- ")
				rest, ok = strings.CutPrefix(strings.TrimPrefix(l, "run: "), "hostemu mutate ")
			}
			if !ok {
				continue
			}
			// the shell's redirection is not mutate's
			rest, _, _ = strings.Cut(rest, " >")
			out = append(out, mutateDocCommand{s.file, s.line, how, rest})
		}
	}
	return out
}

// Every `hostemu mutate` command line of docs/mutate.md's CI snippets is one mutate
// accepts: flags that exist, values it takes, a runner it finds.
func TestMutateDocCommandsParse(t *testing.T) {
	n := 0
	for _, c := range mutateDocCommands(t) {
		if c.how == "pip" {
			continue // TestMutateDocPytestCommandsParse
		}
		n++
		if _, _, err := parseMutate(strings.Fields(c.rest)); err != nil {
			t.Errorf("%s:%d: hostemu mutate %s: %v", c.file, c.line, c.rest, err)
		}
	}
	if n < 3 {
		t.Errorf("found %d mutate command lines in docs/mutate.md's CI snippets, want the GitHub (Go and npm) and GitLab ones", n)
	}
}

// The pytest CI snippets of docs/mutate.md run `hostemu mutate` as pip installs it (the
// wheel's command): each such line is one mutate accepts, and finds pytest in.
func TestMutateDocPytestCommandsParse(t *testing.T) {
	n := 0
	for _, c := range mutateDocCommands(t) {
		if c.how != "pip" {
			continue
		}
		cfg, _, err := parseMutate(strings.Fields(c.rest))
		if err != nil {
			t.Errorf("%s:%d: hostemu mutate %s: %v", c.file, c.line, c.rest, err)
			continue
		}
		if cfg.Runner.Name() == "pytest" {
			n++
		}
	}
	if n < 2 {
		t.Errorf("found %d pytest mutate command lines in docs/mutate.md's CI snippets, want the GitHub and GitLab ones", n)
	}
}
