package scenario

import (
	"fmt"
	"os"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// ValidateFiles checks scenario files for `hostemu validate`. Each path is a file,
// checked as a scenario whatever it holds, or a directory, whose *.yaml and *.yml files
// (not in subdirectories, not dotfiles, as --scenarios loads them) are checked when
// fixture.Classify says they are scenarios; the others are left to the fixture checker.
// Two files naming the same scenario are a problem on the second. summary has one line
// per good scenario file.
//
// isScenario is the file classifier (fixture.Classify(data) == fixture.KindScenario; the
// fixture package owns the one rule and imports this one, hence the parameter).
func ValidateFiles(paths []string, isScenario func(data []byte) bool) (summary []string, problems []Problem) {
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
			case isScenario(f.data):
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
