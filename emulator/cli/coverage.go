package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// coverageTimeout bounds the coverage request.
var coverageTimeout = 10 * time.Second

const coverageUsage = `Usage: hostemu coverage [--url URL] [--namespaces all | --namespace NS] [--min PCT]
                        [--min-operations PCT] [--min-responses PCT] [--min-transitions PCT]
                        [--format text|json|markdown|junit] [--control-token TOKEN]
                        [--ignore LIST] [--config FILE]

Prints which operations, documented answers and lifecycle edges a running hostemu's
clients exercised (GET /_emulator/coverage), and exits 1 when a figure is under its
--min (the total, over the three dimensions) or --min-<dimension>, naming what was
never exercised.

  --url URL            hostemu's address (default http:// + HOSTEMU_ADDR, else 127.0.0.1:4700)
  --namespaces all     the default world and every namespace created since start, deleted ones included
  --namespace NS       one namespace's coverage (ns_…)
  --format F           text (default), json, markdown (for $GITHUB_STEP_SUMMARY), junit
                       (unexercised answers and edges as skipped test cases)
  --control-token T    the control API's token (default $HOSTEMU_CONTROL_TOKEN)
  --ignore LIST        rows that do not apply to your client, left out of the totals and
                       the minimums and listed as ignored: error codes, operations
                       ("POST /v1/files") or lifecycle edges, comma-separated
  --config FILE        the coverage file whose ignore list to apply (default
                       .hostemu-coverage.yaml in the working directory, when there is one)`

var coverageFormats = []string{"text", "json", "markdown", "junit"}

// coverageCmd prints coverage and checks it against the minimums: 0 when it meets them,
// 1 when under one (or hostemu cannot be asked), 2 on a usage error.
func coverageCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu coverage", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	base := fset.String("url", "", "")
	all := fset.String("namespaces", "", "")
	ns := fset.String("namespace", "", "")
	format := fset.String("format", "text", "")
	token := fset.String("control-token", getenv("HOSTEMU_CONTROL_TOKEN"), "")
	ignoreList := fset.String("ignore", "", "")
	config := fset.String("config", "", "")
	var mins [4]pctFlag
	fset.Var(&mins[0], "min", "")
	fset.Var(&mins[1], "min-operations", "")
	fset.Var(&mins[2], "min-responses", "")
	fset.Var(&mins[3], "min-transitions", "")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, coverageUsage)
			return 0
		}
		fmt.Fprintf(stderr, "hostemu coverage: %v\n", flagError(fset, err))
		return 2
	}
	switch {
	case fset.NArg() > 0:
		fmt.Fprintf(stderr, "hostemu coverage: unexpected argument %q\n", fset.Arg(0))
		return 2
	case *all != "" && *all != "all":
		fmt.Fprintf(stderr, "hostemu coverage: --namespaces %q: the only value is \"all\"%s\n", *all, yamlcheck.DidYouMean(*all, []string{"all"}))
		return 2
	case *all != "" && *ns != "":
		fmt.Fprintln(stderr, "hostemu coverage: --namespaces all and --namespace NS exclude each other")
		return 2
	case !contains(coverageFormats, *format):
		fmt.Fprintf(stderr, "hostemu coverage: --format %q: want text, json, markdown or junit%s\n", *format, yamlcheck.DidYouMean(*format, coverageFormats))
		return 2
	}
	ignore, err := coverage.ReadConfig(*config)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu coverage: %v\n", err)
		return 2
	}
	flagged, err := coverage.ParseList(*ignoreList, "--ignore")
	if err != nil {
		fmt.Fprintf(stderr, "hostemu coverage: --ignore: %v\n", err)
		return 2
	}
	ignore = ignore.Add(flagged)
	root, err := baseURL(*base, "/_emulator/coverage", getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu coverage: %v\n", err)
		return 2
	}
	target := root + "/_emulator/coverage"
	if *ns != "" {
		target = root + "/_emulator/namespaces/" + url.PathEscape(*ns) + "/coverage"
	}
	if *all != "" {
		target += "?namespaces=all"
	}
	r, err := fetchCoverage(ctx, target, *token)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu coverage: %v\n", err)
		return 1
	}
	r = ignore.Apply(r)
	scope := "the default world"
	switch {
	case *all != "":
		scope = "all namespaces"
	case *ns != "":
		scope = *ns
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
	case "markdown":
		writeCoverageMarkdown(stdout, r, root, scope, mins)
	case "junit":
		writeCoverageJUnit(stdout, r, scope, mins)
	default:
		writeCoverageText(stdout, r, root, scope)
	}
	if fails := underMin(r, mins); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(stderr, "hostemu coverage: "+f)
		}
		if miss := missing(r); len(miss) > 0 {
			const show = 25
			fmt.Fprintf(stderr, "never exercised (%d):\n", len(miss))
			for i, m := range miss {
				if i == show {
					fmt.Fprintf(stderr, "  … and %d more (--format text lists them all)\n", len(miss)-show)
					break
				}
				fmt.Fprintln(stderr, "  "+m)
			}
		}
		return 1
	}
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pctFlag is a percentage flag, 0–100; set tells it was given.
type pctFlag struct {
	v   float64
	set bool
}

func (p *pctFlag) String() string { return strconv.FormatFloat(p.v, 'f', -1, 64) }

func (p *pctFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 || v > 100 {
		return fmt.Errorf("want a percentage from 0 to 100, not %q", s)
	}
	p.v, p.set = v, true
	return nil
}

// fetchCoverage asks hostemu for coverage.
func fetchCoverage(ctx context.Context, target, token string) (coverage.Report, error) {
	var r coverage.Report
	ctx, cancel := context.WithTimeout(ctx, coverageTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return r, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return r, fmt.Errorf("GET %s: %w (is hostemu running there? --url names another address)", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return r, fmt.Errorf("GET %s: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
			return r, fmt.Errorf("GET %s: %d %s: %s", target, resp.StatusCode, e.Error.Code, e.Error.Message)
		}
		return r, fmt.Errorf("GET %s: %s", target, resp.Status)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("GET %s: not a coverage answer: %w", target, err)
	}
	return r, nil
}

// underMin lists the minimums r does not meet.
func underMin(r coverage.Report, mins [4]pctFlag) []string {
	var out []string
	check := func(m pctFlag, name, flagName string, got float64, seen, total int) {
		if m.set && got < m.v {
			out = append(out, fmt.Sprintf("%s coverage %.1f%% (%d of %d) is under %s %s%%", name, got, seen, total, flagName, m.String()))
		}
	}
	t := r.Totals
	all := t.Operations.Seen + t.Responses.Seen + t.Transitions.Seen
	check(mins[0], "total", "--min", t.Percent, all, t.Operations.Total+t.Responses.Total+t.Transitions.Total)
	check(mins[1], "operations", "--min-operations", t.Operations.Percent, t.Operations.Seen, t.Operations.Total)
	check(mins[2], "responses", "--min-responses", t.Responses.Percent, t.Responses.Seen, t.Responses.Total)
	check(mins[3], "transitions", "--min-transitions", t.Transitions.Percent, t.Transitions.Seen, t.Transitions.Total)
	return out
}

// answerName is one documented answer as the outputs name it: "429 rate_limited".
func answerName(a coverage.ResponseReport) string {
	if a.Code == nil {
		return strconv.Itoa(a.Status)
	}
	return strconv.Itoa(a.Status) + " " + *a.Code
}

func transitionName(t coverage.TransitionReport) string {
	return coverage.TransitionName(t.Resource, t.From, t.To, t.Via)
}

// missing lists everything documented that was never exercised.
func missing(r coverage.Report) []string {
	var out []string
	for _, o := range r.Operations {
		if o.Ignored != "" {
			continue
		}
		if o.Seen == 0 {
			out = append(out, o.Method+" "+o.Path+": never called")
			continue
		}
		var miss []string
		for _, a := range o.Responses {
			if a.Seen == 0 && !a.Undocumented && a.Ignored == "" {
				miss = append(miss, answerName(a))
			}
		}
		if len(miss) > 0 {
			out = append(out, o.Method+" "+o.Path+": "+strings.Join(miss, ", "))
		}
	}
	for _, t := range r.Transitions {
		if t.Seen == 0 && t.Ignored == "" {
			out = append(out, transitionName(t))
		}
	}
	return out
}

// ignoredRows groups the rows r ignores by their reason, in the order they come: each
// group's lines name an operation with its ignored answers, or an edge.
type ignoredGroup struct {
	reason string
	rows   []string
}

func ignoredRows(r coverage.Report) []ignoredGroup {
	var groups []ignoredGroup
	at := map[string]int{}
	add := func(reason, row string) {
		i, ok := at[reason]
		if !ok {
			i = len(groups)
			at[reason] = i
			groups = append(groups, ignoredGroup{reason: reason})
		}
		groups[i].rows = append(groups[i].rows, row)
	}
	for _, o := range r.Operations {
		if o.Ignored != "" {
			add(o.Ignored, o.Method+" "+o.Path+": the operation, every answer included")
			continue
		}
		byReason := map[string][]string{}
		var order []string
		for _, a := range o.Responses {
			if a.Ignored == "" {
				continue
			}
			if _, ok := byReason[a.Ignored]; !ok {
				order = append(order, a.Ignored)
			}
			byReason[a.Ignored] = append(byReason[a.Ignored], answerName(a))
		}
		for _, reason := range order {
			add(reason, o.Method+" "+o.Path+": "+strings.Join(byReason[reason], ", "))
		}
	}
	for _, t := range r.Transitions {
		if t.Ignored != "" {
			add(t.Ignored, transitionName(t))
		}
	}
	return groups
}

func writeCoverageText(w io.Writer, r coverage.Report, root, scope string) {
	t := r.Totals
	fmt.Fprintf(w, "hostemu coverage of %s at %s\n\n", scope, root)
	fmt.Fprintf(w, "  operations   %4d of %4d  %5.1f%%\n", t.Operations.Seen, t.Operations.Total, t.Operations.Percent)
	fmt.Fprintf(w, "  responses    %4d of %4d  %5.1f%%\n", t.Responses.Seen, t.Responses.Total, t.Responses.Percent)
	fmt.Fprintf(w, "  transitions  %4d of %4d  %5.1f%%\n", t.Transitions.Seen, t.Transitions.Total, t.Transitions.Percent)
	fmt.Fprintf(w, "  total                     %5.1f%%\n", t.Percent)
	var fired []string
	for _, f := range r.Faults {
		fired = append(fired, fmt.Sprintf("%s %d", f.Action, f.Seen))
	}
	fmt.Fprintf(w, "\nfaults fired: %s\n", strings.Join(fired, ", "))
	if miss := missing(r); len(miss) > 0 {
		fmt.Fprintf(w, "\nnever exercised (%d):\n", len(miss))
		for _, m := range miss {
			fmt.Fprintln(w, "  "+m)
		}
	}
	if groups := ignoredRows(r); len(groups) > 0 {
		fmt.Fprintf(w, "\nignored, not in the totals (%d rows):\n", t.Ignored)
		for _, g := range groups {
			fmt.Fprintf(w, "  %s:\n", g.reason)
			for _, row := range g.rows {
				fmt.Fprintln(w, "    "+row)
			}
		}
	}
}

// mdEscape keeps a cell's text from breaking a Markdown table.
func mdEscape(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

func writeCoverageMarkdown(w io.Writer, r coverage.Report, root, scope string, mins [4]pctFlag) {
	t := r.Totals
	fmt.Fprintf(w, "### hostemu coverage: %.1f%%\n\n", t.Percent)
	fmt.Fprintf(w, "Of %s at `%s`.\n\n", mdEscape(scope), mdEscape(root))
	fmt.Fprintln(w, "| | seen | total | % |\n|---|---:|---:|---:|")
	fmt.Fprintf(w, "| operations | %d | %d | %.1f |\n", t.Operations.Seen, t.Operations.Total, t.Operations.Percent)
	fmt.Fprintf(w, "| responses | %d | %d | %.1f |\n", t.Responses.Seen, t.Responses.Total, t.Responses.Percent)
	fmt.Fprintf(w, "| transitions | %d | %d | %.1f |\n", t.Transitions.Seen, t.Transitions.Total, t.Transitions.Percent)
	if fails := underMin(r, mins); len(fails) > 0 {
		fmt.Fprintln(w)
		for _, f := range fails {
			fmt.Fprintf(w, "> **Under the minimum:** %s\n", mdEscape(f))
		}
	}
	fmt.Fprintln(w, "\n| operation | calls | answers seen | never answered |\n|---|---:|---|---|")
	for _, o := range r.Operations {
		var seen, miss []string
		for _, a := range o.Responses {
			switch {
			case a.Seen > 0:
				seen = append(seen, fmt.Sprintf("%s ×%d", answerName(a), a.Seen))
			case !a.Undocumented && a.Ignored == "":
				miss = append(miss, answerName(a))
			}
		}
		if o.Ignored != "" {
			miss = []string{"(ignored)"}
		}
		fmt.Fprintf(w, "| `%s %s` | %d | %s | %s |\n", o.Method, mdEscape(o.Path), o.Seen, mdEscape(strings.Join(seen, ", ")), mdEscape(strings.Join(miss, ", ")))
	}
	fmt.Fprintln(w, "\n| lifecycle edge | seen |\n|---|---:|")
	for _, tr := range r.Transitions {
		seen := strconv.FormatInt(tr.Seen, 10)
		if tr.Ignored != "" {
			seen += " (ignored)"
		}
		fmt.Fprintf(w, "| %s | %s |\n", mdEscape(transitionName(tr)), seen)
	}
	if groups := ignoredRows(r); len(groups) > 0 {
		fmt.Fprintf(w, "\n%d rows ignored, not in the totals:\n\n| ignored | why |\n|---|---|\n", t.Ignored)
		for _, g := range groups {
			for _, row := range g.rows {
				fmt.Fprintf(w, "| %s | %s |\n", mdEscape(row), mdEscape(g.reason))
			}
		}
	}
	fmt.Fprintln(w, "\n| fault action | fired |\n|---|---:|")
	for _, f := range r.Faults {
		fmt.Fprintf(w, "| %s | %d |\n", f.Action, f.Seen)
	}
}

// The JUnit XML shape CI systems read (Jenkins, GitLab, GitHub test reporters).
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Skipped int          `xml:"skipped,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name    string      `xml:"name,attr"`
	Tests   int         `xml:"tests,attr"`
	Fails   int         `xml:"failures,attr"`
	Skipped int         `xml:"skipped,attr"`
	Cases   []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	if c.Skipped != nil {
		s.Skipped++
	}
	if c.Failure != nil {
		s.Fails++
	}
}

// writeCoverageJUnit writes coverage as JUnit XML: a suite per dimension, a case per
// documented answer and lifecycle edge, skipped when never exercised; and a
// "thresholds" suite whose cases fail under a minimum.
func writeCoverageJUnit(w io.Writer, r coverage.Report, scope string, mins [4]pctFlag) {
	ops := junitSuite{Name: "hostemu coverage: responses"}
	for _, o := range r.Operations {
		for _, a := range o.Responses {
			if a.Undocumented {
				continue
			}
			c := junitCase{Name: o.Method + " " + o.Path + " → " + answerName(a), Classname: "hostemu.coverage.responses"}
			switch {
			case a.Ignored != "":
				c.Skipped = &junitMessage{Message: "ignored: " + a.Ignored}
			case a.Seen == 0:
				c.Skipped = &junitMessage{Message: "never answered"}
			}
			ops.add(c)
		}
	}
	trans := junitSuite{Name: "hostemu coverage: transitions"}
	for _, t := range r.Transitions {
		c := junitCase{Name: transitionName(t), Classname: "hostemu.coverage.transitions"}
		switch {
		case t.Ignored != "":
			c.Skipped = &junitMessage{Message: "ignored: " + t.Ignored}
		case t.Seen == 0:
			c.Skipped = &junitMessage{Message: "never happened"}
		}
		trans.add(c)
	}
	suites := junitSuites{Name: "hostemu coverage of " + scope, Suites: []junitSuite{ops, trans}}
	fails := underMin(r, mins)
	if len(fails) > 0 || mins[0].set || mins[1].set || mins[2].set || mins[3].set {
		th := junitSuite{Name: "hostemu coverage: thresholds"}
		th.add(junitCase{Name: "minimums", Classname: "hostemu.coverage.thresholds"})
		if len(fails) > 0 {
			th.Cases[0].Failure = &junitMessage{Message: strings.Join(fails, "; ")}
			th.Fails++
		}
		suites.Suites = append(suites.Suites, th)
	}
	for _, s := range suites.Suites {
		suites.Tests += s.Tests
		suites.Fails += s.Fails
		suites.Skipped += s.Skipped
	}
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	enc.Encode(suites)
	io.WriteString(w, "\n")
}
