package scenario

import (
	"fmt"
	"sort"
)

// Problem is one thing wrong with a scenario file, located by file and line so that
// `hostemu validate`, the log and GET /_emulator/scenarios can point at it.
// Line is 0 only for problems with the file as a whole (it cannot be read).
type Problem struct {
	File    string
	Line    int
	Message string
}

// String formats the problem as "file:line: message" (or "file: message" without a line).
func (p Problem) String() string {
	if p.Line <= 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
}

// sortProblems orders problems by file and line, keeping discovery order within a line.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
}
