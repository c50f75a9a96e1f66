package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/mutate"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

const mutateUsage = `Usage: hostemu mutate [flags] -- COMMAND [ARGS...]

Runs a client's test suite once as it is (the baseline, which must pass), then once more
per mutant: one documented error answer (or a connection reset) of one operation that
one test called, injected at that test's first call of it. A mutant is killed when the
test fails and survives when it still passes: the client swallowed the error, or the
test did not look. See docs/mutate.md.

  --runner NAME        go, jest, node, pytest or vitest (default: found from COMMAND)
  --tests LIST         only these tests (comma-separated; * matches any run of characters)
  --operations LIST    only these operations, by operationId (createDeployment, …)
  --codes LIST         only these error codes (service_unavailable, …; reset for the reset)
  --budget DURATION    stop starting runs after this long; the rest are not_run (default none)
  --parallel N         runs at a time (default the number of cores)
  --timeout DURATION   bound on each run of COMMAND (default 10m)
  --format F           text (default), json, markdown (for $GITHUB_STEP_SUMMARY), junit
  --min PCT            exit 1 when the score (killed / run) is under PCT percent
  --quiet              no progress lines on stderr

Exit status: 0, or 1 under --min, 2 when the baseline fails or a flag is wrong.`

// mutateCmd is `hostemu mutate`.
func mutateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu mutate", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	runnerName := fset.String("runner", "", "")
	tests := fset.String("tests", "", "")
	ops := fset.String("operations", "", "")
	codes := fset.String("codes", "", "")
	budget := fset.Duration("budget", 0, "")
	parallel := fset.Int("parallel", runtime.NumCPU(), "")
	timeout := fset.Duration("timeout", 10*time.Minute, "")
	format := fset.String("format", "text", "")
	quiet := fset.Bool("quiet", false, "")
	var min pctFlag
	fset.Var(&min, "min", "")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, mutateUsage)
			return 0
		}
		fmt.Fprintf(stderr, "hostemu mutate: %v\n", mutateFlagError(err))
		return 2
	}
	argv := fset.Args()
	// flag stops at "--" and drops it; without one, a command was given without it
	if !dashed(args, len(argv)) {
		if len(argv) == 0 {
			fmt.Fprintf(stderr, "hostemu mutate: no test command: hostemu mutate [flags] -- COMMAND [ARGS...]\n")
		} else {
			fmt.Fprintf(stderr, "hostemu mutate: put -- before the test command: hostemu mutate [flags] -- %s\n", strings.Join(argv, " "))
		}
		return 2
	}
	if len(argv) == 0 {
		fmt.Fprintf(stderr, "hostemu mutate: no test command after --\n")
		return 2
	}
	cat, err := mutate.DefaultCatalogue()
	if err != nil {
		fmt.Fprintf(stderr, "hostemu mutate: %v\n", err)
		return 2
	}
	bad := func(msg string) int {
		fmt.Fprintf(stderr, "hostemu mutate: %s\n", msg)
		return 2
	}
	switch {
	case !contains(mutate.Formats, *format):
		return bad(fmt.Sprintf("--format %q is not one of %s%s", *format, strings.Join(mutate.Formats, ", "), yamlcheck.Suggest(*format, mutate.Formats)))
	case *parallel < 1 || *parallel > 256:
		return bad(fmt.Sprintf("--parallel %d: want 1 to 256", *parallel))
	case *budget < 0:
		return bad("--budget must not be negative")
	case *timeout <= 0:
		return bad("--timeout must be positive")
	}
	opList, msg := checkList("--operations", *ops, cat.IDs())
	if msg != "" {
		return bad(msg)
	}
	codeList, msg := checkList("--codes", *codes, cat.Codes())
	if msg != "" {
		return bad(msg)
	}
	runner, err := mutate.FindRunner(*runnerName, argv)
	if err != nil {
		return bad(err.Error())
	}
	dir, err := os.Getwd()
	if err != nil {
		return bad(err.Error())
	}
	cfg := mutate.Config{
		Argv: argv, Runner: runner, Dir: dir, Tests: splitList(*tests), Operations: opList, Codes: codeList,
		Budget: *budget, Parallel: *parallel, Timeout: *timeout, Catalogue: cat,
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	run, err := mutate.Execute(ctx, cfg)
	if err != nil {
		if errors.Is(err, mutate.ErrBaseline) {
			fmt.Fprintf(stderr, "hostemu mutate: %v\n", err)
			if run != nil && run.Baseline.Output != "" {
				fmt.Fprintf(stderr, "\nthe end of its output:\n%s\n", strings.TrimRight(run.Baseline.Output, "\n"))
			}
			return 2
		}
		return bad(err.Error())
	}
	run.Shorten()
	if err := run.Write(stdout, *format); err != nil {
		fmt.Fprintf(stderr, "hostemu mutate: writing the report: %v\n", err)
		return 1
	}
	if *format != "text" && !*quiet {
		// the machine-readable report is on stdout: the figure a person reads goes to stderr
		fmt.Fprintf(stderr, "hostemu mutate: score %.1f%%\n", run.Score*100)
	}
	if min.set && run.Score*100 < min.v {
		fmt.Fprintf(stderr, "hostemu mutate: score %.1f%% is under --min %s%%\n", run.Score*100, min.String())
		return 1
	}
	return 0
}

// dashed reports whether args held a "--" before its last n words (flag drops it).
func dashed(args []string, n int) bool {
	i := len(args) - n - 1
	return i >= 0 && args[i] == "--"
}

func mutateFlagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag %s (see hostemu mutate -h)", name)
	}
	return flagError(err)
}

// checkList splits a list flag and refuses a name without a * that is not in known.
func checkList(flagName, s string, known []string) ([]string, string) {
	list := splitList(s)
	for _, x := range list {
		if !strings.Contains(x, "*") && !contains(known, x) {
			return nil, fmt.Sprintf("%s: %q is not one%s", flagName, x, yamlcheck.Suggest(x, known))
		}
	}
	return list, ""
}
