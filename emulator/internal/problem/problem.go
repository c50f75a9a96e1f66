// Package problem is the one shape of a located problem in a user's file, shared by the
// scenario and fixture checkers so that `hostemu validate`, the log and the control API
// print them alike.
package problem

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Problem is one thing wrong in a file, at a line (0 when it concerns the file as a
// whole, e.g. one that cannot be read).
type Problem struct {
	File string
	Line int
	// Column is the 1-based column of the offending node on Line, 0 when unknown (a
	// syntax error, a problem of the whole file).
	Column  int
	Message string
}

// String formats the problem as "file:line:column: message", the form editors jump to
// ("file:line: message" without a column, "file: message" without a line).
func (p Problem) String() string {
	switch {
	case p.Line <= 0:
		return p.File + ": " + p.Message
	case p.Column <= 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Column, p.Message)
}

// List is the problems of one or more files, as one error: each on its own line, in
// String's form. It is the one type file problems travel in when an error is wanted.
type List []Problem

// Error joins the problems, one a line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err is l as an error, nil when it holds no problem.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
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

// Reason is err without the path an *fs.PathError carries, for a message whose caller
// already names the file: "no such file or directory" rather than "open x: no such …".
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
