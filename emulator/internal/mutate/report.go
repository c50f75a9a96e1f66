package mutate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats are the report formats.
var Formats = []string{"text", "json", "markdown", "junit"}

// shortNames is the name each test is shown by: the keys without the word they all
// start with when every key has two words (one Go package: TestCreate rather than
// "example.com/client TestCreate").
func shortNames(ms []Mutant) map[string]string {
	names := map[string]string{}
	prefix := ""
	one := true
	for i, m := range ms {
		p, _, ok := strings.Cut(m.Test, " ")
		if !ok || (i > 0 && p != prefix) {
			one = false
			break
		}
		prefix = p
	}
	for _, m := range ms {
		names[m.Test] = m.Test
		if one && len(ms) > 0 {
			names[m.Test] = strings.TrimPrefix(m.Test, prefix+" ")
		}
	}
	return names
}

// Shorten gives the run's mutants the names the report shows. Only Go's keys are
// "package name": other runners' names hold spaces of their own (a pytest parameter,
// test[a b]; a Vitest full name) and are shown whole.
func (r *Run) Shorten() {
	if r.Baseline.Runner != "go" {
		return
	}
	names := shortNames(r.Mutants)
	for i := range r.Mutants {
		r.Mutants[i].Test = names[r.Mutants[i].Test]
	}
}

// counts are the run's mutants by result.
func (r *Run) counts() map[Result]int {
	c := map[Result]int{}
	for _, m := range r.Mutants {
		c[m.Result]++
	}
	return c
}

// survivors are the survived mutants grouped by operation and code, in the run's order.
func (r *Run) survivors() []Mutant {
	var s []Mutant
	for _, m := range r.Mutants {
		if m.Result == Survived {
			s = append(s, m)
		}
	}
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Operation != s[j].Operation {
			return s[i].Operation < s[j].Operation
		}
		return s[i].Code < s[j].Code
	})
	return s
}

func codeText(m Mutant) string {
	if m.Code == Reset {
		return "a connection reset"
	}
	return fmt.Sprintf("%d %s", m.Status, m.Code)
}

// Write writes the report in format.
func (r *Run) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "markdown":
		return r.markdown(w)
	case "junit":
		return r.junit(w)
	default:
		return r.text(w)
	}
}

func (r *Run) summary() string {
	c := r.counts()
	s := fmt.Sprintf("score %.1f%%: %d killed, %d survived", r.Score*100, c[Killed], c[Survived])
	if c[TimedOut] > 0 {
		s += fmt.Sprintf(", %d timed out", c[TimedOut])
	}
	if c[NotRun] > 0 {
		s += fmt.Sprintf(", %d not run", c[NotRun])
	}
	return s + fmt.Sprintf(" of %d mutants (%d tests, %d runs after the baseline, %.1f s)",
		len(r.Mutants), r.Baseline.WithWorlds, r.Runs, float64(r.DurationMS)/1000)
}

func (r *Run) text(w io.Writer) error {
	surv := r.survivors()
	if len(surv) > 0 {
		fmt.Fprintf(w, "%d mutants survived: the tests passed while the client met these answers\n\n", len(surv))
		for _, m := range surv {
			fmt.Fprintf(w, "SURVIVED  %s: %s (%s %s) answered %s\n", m.Test, m.Operation, m.Method, m.Path, codeText(m))
			if out := strings.TrimSpace(m.Output); out != "" {
				for _, line := range strings.Split(out, "\n") {
					fmt.Fprintf(w, "    | %s\n", line)
				}
			}
			fmt.Fprintln(w)
		}
	}
	for _, m := range r.Mutants {
		if m.Result == TimedOut || m.Result == NotRun {
			why := ""
			if m.Why != "" {
				why = " (" + m.Why + ")"
			}
			fmt.Fprintf(w, "%-9s %s: %s answered %s%s\n", strings.ToUpper(string(m.Result)), m.Test, m.Operation, codeText(m), why)
		}
	}
	for _, sk := range r.Baseline.Skipped {
		fmt.Fprintf(w, "NOT MUTATED %s: %s\n", sk.Test, sk.Why)
	}
	_, err := fmt.Fprintf(w, "hostemu mutate: %s\n", r.summary())
	return err
}

// mdEscape keeps s in its table cell as text: no column, no line break, no code span,
// no HTML (a step summary renders some).
var mdEscape = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "`", "'", "&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

func (r *Run) markdown(w io.Writer) error {
	fmt.Fprintf(w, "## hostemu mutate: %.1f%%\n\n%s\n\n", r.Score*100, r.summary())
	surv := r.survivors()
	if len(surv) > 0 {
		fmt.Fprintf(w, "### Survivors: answers the tests did not notice\n\n| operation | answer | test |\n|---|---|---|\n")
		for _, m := range surv {
			fmt.Fprintf(w, "| `%s` (%s %s) | %s | %s |\n", m.Operation, m.Method, mdEscape(m.Path), mdEscape(codeText(m)), mdEscape(m.Test))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "<details><summary>All %d mutants</summary>\n\n| test | operation | answer | result |\n|---|---|---|---|\n", len(r.Mutants))
	for _, m := range r.Mutants {
		fmt.Fprintf(w, "| %s | `%s` | %s | %s |\n", mdEscape(m.Test), m.Operation, mdEscape(codeText(m)), m.Result)
	}
	_, err := fmt.Fprintln(w, "\n</details>")
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// junit is a test case per mutant, one suite per operation: a survivor is a failure
// (the suite did not notice), a mutant not run or timed out is skipped.
func (r *Run) junit(w io.Writer) error {
	out := junitSuites{Name: "hostemu mutate"}
	idx := map[string]int{}
	for _, m := range r.Mutants {
		i, ok := idx[m.Operation]
		if !ok {
			i = len(out.Suites)
			idx[m.Operation] = i
			out.Suites = append(out.Suites, junitSuite{Name: "mutate " + m.Operation})
		}
		s := &out.Suites[i]
		c := junitCase{Name: fmt.Sprintf("%s answers %s", m.Operation, codeText(m)), Classname: m.Test}
		switch m.Result {
		case Survived:
			c.Failure = &junitMessage{Message: fmt.Sprintf("survived: %s passed while %s answered %s", m.Test, m.Operation, codeText(m)), Text: m.Output}
			s.Failures++
			out.Failures++
		case NotRun, TimedOut:
			c.Skipped = &junitMessage{Message: strings.TrimSpace(string(m.Result) + " " + m.Why)}
			s.Skipped++
			out.Skipped++
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
