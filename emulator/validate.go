package emulator

import "github.com/hostemu/hostemu/emulator/internal/fixture"

// Validate checks the scenario and fixture files named by paths (files, or the
// *.yaml and *.yml files at the top of a directory, as --scenarios and --fixtures read
// them) and returns a short summary, or one "file:line: problem" per problem. Files are
// told apart by their top-level keys; the fixture files of one directory are checked as
// one merged set, as --fixtures DIR would load them.
func Validate(paths []string) (summary, problems []string) { return fixture.ValidatePaths(paths) }
