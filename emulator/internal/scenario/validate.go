package scenario

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

var fixtureKeys = []string{"tokens", "cipher", "policy", "projects", "generate"}

// ValidateFiles checks scenario files for `hostemu validate`. Each path is a file,
// checked as a scenario whatever it holds, or a directory, whose *.yaml and *.yml files
// (not in subdirectories, not dotfiles, as --scenarios loads them) are checked when
// LooksLikeScenario says they are scenarios; the others are left to the fixture checker.
// Two files naming the same scenario are a problem on the second. summary has one line
// per good scenario file.
func ValidateFiles(paths []string) (summary []string, problems []Problem) {
	check := checker(&summary, &problems)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			problems = append(problems, Problem{File: p, Message: fmt.Sprintf("cannot read: %v", yamlcheck.Pathless(err))})
			continue
		}
		if !fi.IsDir() {
			data, err := readFile(p)
			if err != nil {
				problems = append(problems, Problem{File: p, Message: readProblem(err)})
				continue
			}
			check(Source{Path: p, Data: data})
			continue
		}
		files, ps := scenarioFiles(p)
		problems = append(problems, ps...)
		for _, f := range files {
			switch {
			case f.err != nil:
				problems = append(problems, Problem{File: f.path, Message: readProblem(f.err)})
			case LooksLikeScenario(f.data):
				check(Source{Path: f.path, Data: f.data})
			}
		}
	}
	return summary, problems
}

// Source is a scenario file already read: its path and its content.
type Source struct {
	Path string
	Data []byte
}

// ValidateSources is ValidateFiles for files already read (by `hostemu validate`,
// which reads each file once to tell scenarios from fixtures).
func ValidateSources(sources []Source) (summary []string, problems []Problem) {
	check := checker(&summary, &problems)
	for _, src := range sources {
		check(src)
	}
	return summary, problems
}

// checker returns a function that parses one scenario file after another into summary
// and problems; two files naming the same scenario are a problem on the second.
func checker(summary *[]string, problems *[]Problem) func(Source) {
	claimed := map[string]string{}
	return func(src Source) {
		s, ps := Parse(src.Path, src.Data)
		*problems = append(*problems, ps...)
		if s == nil {
			return
		}
		if other, dup := claimed[s.Name]; dup {
			*problems = append(*problems, Problem{File: src.Path, Line: s.nameLine,
				Message: fmt.Sprintf("scenario %q is already defined in %s", s.Name, other)})
			return
		}
		claimed[s.Name] = src.Path
		*summary = append(*summary, fmt.Sprintf("%s: scenario %q ok", src.Path, s.Name))
	}
}

// topKeyRE finds top-level keys line by line, for files too broken for YAML.
var topKeyRE = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)[ \t]*:`)

// LooksLikeScenario tells a scenario file from a fixture file by its top-level keys:
// it is a scenario when it has more of name, description, deployments, domains,
// certificates, rate_limits and faults than of tokens, cipher, policy, projects and
// generate (a tie with at least one scenario key counts as a scenario). A file YAML
// cannot read is judged by the keys at the start of its lines.
func LooksLikeScenario(data []byte) bool {
	var keys []string
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err == nil &&
		len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			keys = append(keys, m.Content[i].Value)
		}
	} else {
		for _, m := range topKeyRE.FindAllSubmatch(data, -1) {
			keys = append(keys, string(m[1]))
		}
	}
	scenarioN, fixtureN := 0, 0
	for _, k := range keys {
		switch {
		case slices.Contains(topKeys, k):
			scenarioN++
		case slices.Contains(fixtureKeys, k):
			fixtureN++
		}
	}
	return scenarioN > 0 && scenarioN >= fixtureN
}
