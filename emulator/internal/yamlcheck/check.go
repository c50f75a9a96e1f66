// Package yamlcheck is the one line-aware YAML checker behind scenario and fixture
// files: it parses a document, reports syntax errors at the line a user sees them on,
// refuses alias bombs, walks the node tree key by key, and words every problem alike,
// so the same mistake reads the same in a scenario and in a fixture.
//
// Every check reads yaml.v3 nodes (never its reflection decoding), so every problem has
// a line; problems are collected, not returned at the first, so one run shows them all.
// Messages quote at most an excerpt of the file's content (see Excerpt). Files are
// read bounded in size and, from a directory, never through a link out of it (Dir).
package yamlcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/problem"
)

// Checker collects the problems of one file. The zero value is not usable; call New.
type Checker struct {
	file     string
	lastLine int // problems never point past it (yaml may point just after the end)
	problems []problem.Problem
}

// New returns a checker for the file named file (as problems show it) holding data.
func New(file string, data []byte) *Checker {
	return &Checker{file: file, lastLine: lastLine(data)}
}

// Failed reports whether any problem was recorded.
func (c *Checker) Failed() bool { return len(c.problems) > 0 }

// Problems returns the problems recorded so far, sorted by line, without repeats.
func (c *Checker) Problems() []problem.Problem {
	ps := slices.Clone(c.problems)
	problem.Sort(ps)
	return slices.Compact(ps)
}

// Addf records a problem at n's line and column (line 1 for a nil node).
func (c *Checker) Addf(n *yaml.Node, format string, args ...any) {
	line, col := 1, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	c.add(line, col, format, args...)
}

// AddAt records a problem at a line, clamped to the file's lines, with no column.
func (c *Checker) AddAt(line int, format string, args ...any) {
	c.add(line, 0, format, args...)
}

func (c *Checker) add(line, col int, format string, args ...any) {
	line = max(1, line)
	if c.lastLine > 0 && line > c.lastLine {
		line, col = c.lastLine, 0 // yaml pointed past the end: no column there
	}
	c.problems = append(c.problems, problem.Problem{File: c.file, Line: line, Column: max(col, 0), Message: Clip(fmt.Sprintf(format, args...))})
}

// lastLine is the number of the file's last line, not counting an empty one after a
// final newline.
func lastLine(data []byte) int {
	n := 1
	for i, b := range data {
		if b == '\n' && i != len(data)-1 {
			n++
		}
	}
	return n
}

// MaxExcerpt is the most characters of a file's content a message quotes; longer
// values are cut and end in "…". A file may hold anything (a symlink to /etc/passwd, a
// 5 MB line): problems are shown in the log and the control API and must not echo it.
const MaxExcerpt = 80

// maxMessage bounds a whole message, for content that reaches it unquoted (key paths).
const maxMessage = 400

// Excerpt returns s cut to MaxExcerpt characters, with "…" when it was cut.
func Excerpt(s string) string {
	return cut(s, MaxExcerpt)
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// Clip shortens every Go-quoted string in msg longer than MaxExcerpt to an excerpt,
// then the whole message to a few hundred characters. Addf applies it to every
// message, so a %q of file content can never quote more than an excerpt.
func Clip(msg string) string {
	if len(msg) <= MaxExcerpt {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] == '"' {
			if q, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				i += len(q)
				if s, err := strconv.Unquote(q); err == nil && utf8.RuneCountInString(s) > MaxExcerpt {
					q = strconv.Quote(Excerpt(s))
				}
				b.WriteString(q)
				continue
			}
		}
		b.WriteByte(msg[i])
		i++
	}
	return cut(b.String(), maxMessage)
}
