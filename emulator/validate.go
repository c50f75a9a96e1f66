package emulator

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Validate checks the scenario and fixture files named by paths (files, or the
// *.yaml and *.yml files at the top of a directory, as --scenarios and --fixtures read
// them) and returns a short summary, or one "file:line: problem" per problem. Files are
// told apart by their top-level keys; the fixture files of one directory are checked as
// one merged set, as --fixtures DIR would load them.
func Validate(paths []string) (summary, problems []string) {
	for _, p := range paths {
		files, ps := yamlFiles(p)
		problems = append(problems, ps...)
		var scenarios []scenario.Source
		var fixtures []*fixture.File
		for _, yf := range files {
			f, data := yf.path, yf.data
			switch fixture.Classify(data) {
			case fixture.KindScenario:
				scenarios = append(scenarios, scenario.Source{Path: f, Data: data})
			case fixture.KindFixture:
				file, ps := fixture.Parse(f, data)
				for _, pr := range ps {
					problems = append(problems, pr.String())
				}
				if len(ps) == 0 {
					fixtures = append(fixtures, file)
				}
			default:
				problems = append(problems, f+":1: neither a scenario (name, deployments, domains, …) nor a fixture file (tokens, cipher, projects, …)")
			}
		}
		s, ps2 := scenario.ValidateSources(scenarios)
		summary = append(summary, s...)
		for _, pr := range ps2 {
			problems = append(problems, pr.String())
		}
		if len(fixtures) > 0 {
			snap, ps := fixture.Build(fixtures, fixture.Options{Seed: 1, Start: validateStart})
			for _, pr := range ps {
				problems = append(problems, pr.String())
			}
			if len(ps) == 0 {
				summary = append(summary, fmt.Sprintf("%s: fixtures ok: %d tokens, %d projects, %d deployments, %d domains, %d master keys",
					p, len(snap.Tokens), len(snap.Projects), len(snap.Deployments), len(snap.Domains), len(snap.Cipher.MasterKeys)))
			}
		}
	}
	return summary, problems
}

// validateStart is a fixed clock start, so validate's output does not depend on the day.
var validateStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// yamlFile is a file Validate reads: its path and content.
type yamlFile struct {
	path string
	data []byte
}

// yamlFiles reads a path: a file as given, a directory's *.yaml and *.yml files at its
// top, in lexical order, as --scenarios and --fixtures read them (never following a
// link out of the directory, never more than a fixture file's size limit). What cannot
// be read is a problem.
func yamlFiles(p string) (files []yamlFile, problems []string) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %s", p, problem.Reason(err))}
	}
	if !fi.IsDir() {
		data, err := yamlcheck.ReadFile(p, yamlcheck.MaxFixtureBytes)
		if err != nil {
			return nil, []string{fmt.Sprintf("%s: %s", p, problem.Reason(err))}
		}
		return []yamlFile{{p, data}}, nil
	}
	dir, err := yamlcheck.OpenDir(p)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %s", p, problem.Reason(err))}
	}
	defer dir.Close()
	names, err := dir.Files()
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %s", p, problem.Reason(err))}
	}
	for _, name := range names {
		path := filepath.Join(p, name)
		data, err := dir.Read(name, yamlcheck.MaxFixtureBytes)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", path, problem.Reason(err)))
			continue
		}
		files = append(files, yamlFile{path, data})
	}
	if len(names) == 0 {
		problems = append(problems, fmt.Sprintf("%s: no *.yaml or *.yml files", p))
	}
	return files, problems
}
