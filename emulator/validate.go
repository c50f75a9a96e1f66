package emulator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
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
		var scenarios []string
		var fixtures []*fixture.File
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s", f, statReason(err)))
				continue
			}
			switch {
			case scenario.LooksLikeScenario(data):
				scenarios = append(scenarios, f)
			case fixture.LooksLikeFixture(data):
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
		s, ps2 := scenario.ValidateFiles(scenarios)
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

// yamlFiles expands a path into files: a file as given, a directory into the *.yaml and
// *.yml files at its top, in lexical order. Unreadable paths are problems.
func yamlFiles(p string) (files, problems []string) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %s", p, statReason(err))}
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %s", p, statReason(err))}
	}
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(p, e.Name()))
		}
	}
	if len(files) == 0 {
		problems = append(problems, fmt.Sprintf("%s: no *.yaml or *.yml files", p))
	}
	return files, problems
}

// statReason is a stat error without the path, which the caller already names.
func statReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
