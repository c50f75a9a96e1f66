// Package problem is the one shape of a located problem in a user's file, shared by the
// scenario and fixture checkers so that `hostemu validate`, the log and the control API
// print them alike.
package problem

import (
	"fmt"
	"sort"
)

// Problem is one thing wrong in a file, at a line (0 when it concerns the file as a
// whole, e.g. one that cannot be read).
type Problem struct {
	File    string
	Line    int
	Message string
}

// String formats the problem as "file:line: message", the form editors jump to
// ("file: message" without a line).
func (p Problem) String() string {
	if p.Line <= 0 {
		return p.File + ": " + p.Message
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
}

// Sort orders problems by file and line, keeping discovery order within a line.
func Sort(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
}
