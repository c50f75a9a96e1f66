package scenario

import (
	"github.com/hostemu/hostemu/emulator/internal/problem"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Problem is one thing wrong with a scenario file, located by file and line so that
// `hostemu validate`, the log and GET /_emulator/scenarios can point at it.
type Problem = problem.Problem

// sortProblems orders problems by file and line, keeping discovery order within a line.
func sortProblems(ps []Problem) { problem.Sort(ps) }

// didYouMean is the end of a message refusing an enum value (yamlcheck.Suggest).
func didYouMean(got string, known []string) string { return yamlcheck.Suggest(got, known) }

// closestHint is didYouMean without the list, for messages that already say what they
// want.
func closestHint(got string, known []string) string { return yamlcheck.DidYouMean(got, known) }
