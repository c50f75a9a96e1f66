package scenario

import "github.com/hostemu/hostemu/emulator/internal/problem"

// Problem is one thing wrong with a scenario file, located by file and line so that
// `hostemu validate`, the log and GET /_emulator/scenarios can point at it.
type Problem = problem.Problem

// sortProblems orders problems by file and line, keeping discovery order within a line.
func sortProblems(ps []Problem) { problem.Sort(ps) }
