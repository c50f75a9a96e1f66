package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fault"
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
  --tests LIST         only these tests, as the report names them (comma-separated; * matches any run of characters)
  --operations LIST    only these operations, by operationId (createDeployment, …)
  --codes LIST         only these error codes (service_unavailable, …; reset for the reset)
  --budget DURATION    stop starting runs after this long; the rest are not_run (default none)
  --parallel N         runs at a time (default the number of cores)
  --timeout DURATION   bound on each run of COMMAND (default 10m; the baseline gets at least 10m)
  --format F           text (default), json, markdown (for $GITHUB_STEP_SUMMARY), junit
  --min PCT            exit 1 when the score (killed / run) is under PCT percent
  --quiet              no progress lines on stderr

Exit status: 0, or 1 under --min, 2 when the baseline fails, a flag is wrong or the run
was interrupted.`

// mutateCmd is `hostemu mutate`.
func mutateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, opt, err := parseMutate(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, mutateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "hostemu mutate: %v\n", err)
		return 2
	}
	return runMutate(ctx, cfg, opt, stdout, stderr)
}

// runMutate makes the run cfg describes and reports it as opt says: mutateCmd once its
// command line is read, its exit status included.
func runMutate(ctx context.Context, cfg mutate.Config, opt mutateOpts, stdout, stderr io.Writer) int {
	if !opt.quiet {
		cfg.Progress = stderr
	}
	run, err := mutate.Execute(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu mutate: %v\n", err)
		if run != nil {
			for _, sk := range run.Baseline.Skipped {
				fmt.Fprintf(stderr, "  not mutated: %s: %s\n", sk.Test, sk.Why)
			}
		}
		if errors.Is(err, mutate.ErrBaseline) && run != nil && run.Baseline.Output != "" {
			fmt.Fprintf(stderr, "\nthe end of its output:\n%s\n", strings.TrimRight(run.Baseline.Output, "\n"))
		}
		return 2
	}
	run.Shorten()
	if err := run.Write(stdout, opt.format); err != nil {
		fmt.Fprintf(stderr, "hostemu mutate: writing the report: %v\n", err)
		return 1
	}
	if opt.format != "text" && !opt.quiet {
		// the machine-readable report is on stdout: the figure a person reads goes to stderr
		fmt.Fprintf(stderr, "hostemu mutate: score %.1f%%\n", run.Score*100)
	}
	if run.Interrupted {
		// part of a run is no verdict: a gate must not pass on it
		fmt.Fprintln(stderr, "hostemu mutate: interrupted: the report is partial (the mutants left are not_run)")
		return 2
	}
	if opt.min.set && run.Score*100 < opt.min.v {
		fmt.Fprintf(stderr, "hostemu mutate: score %.1f%% is under --min %s%%\n", run.Score*100, opt.min.String())
		return 1
	}
	return 0
}

// mutateOpts are the flags of mutate that are not the run's.
type mutateOpts struct {
	format string
	quiet  bool
	min    pctFlag
}

// parseMutate reads mutate's command line: the run's configuration (in the working
// directory) and the report's options, or what is wrong with it (flag.ErrHelp for -h).
func parseMutate(args []string) (mutate.Config, mutateOpts, error) {
	var opt mutateOpts
	fset := flag.NewFlagSet("hostemu mutate", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	runnerName := fset.String("runner", "", "")
	tests := fset.String("tests", "", "")
	ops := fset.String("operations", "", "")
	codes := fset.String("codes", "", "")
	budget := fset.Duration("budget", 0, "")
	parallel := fset.Int("parallel", runtime.NumCPU(), "")
	timeout := fset.Duration("timeout", 10*time.Minute, "")
	fset.StringVar(&opt.format, "format", "text", "")
	fset.BoolVar(&opt.quiet, "quiet", false, "")
	fset.Var(&opt.min, "min", "")
	var cfg mutate.Config
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, opt, err
		}
		return cfg, opt, flagError(fset, err)
	}
	argv := fset.Args()
	// flag stops at "--" and drops it; without one, a command was given without it
	if !dashed(args, len(argv)) {
		if len(argv) == 0 {
			return cfg, opt, errors.New("no test command: hostemu mutate [flags] -- COMMAND [ARGS...]")
		}
		return cfg, opt, fmt.Errorf("put -- before the test command: hostemu mutate [flags] -- %s", strings.Join(argv, " "))
	}
	if len(argv) == 0 {
		return cfg, opt, errors.New("no test command after --")
	}
	cat, err := mutate.DefaultCatalogue()
	if err != nil {
		return cfg, opt, err
	}
	switch {
	case !contains(mutate.Formats, opt.format):
		return cfg, opt, fmt.Errorf("--format %q is not one of %s%s", opt.format, strings.Join(mutate.Formats, ", "), yamlcheck.Suggest(opt.format, mutate.Formats))
	case *parallel < 1 || *parallel > 256:
		return cfg, opt, fmt.Errorf("--parallel %d: want 1 to 256", *parallel)
	case *budget < 0:
		return cfg, opt, errors.New("--budget must not be negative")
	case *timeout <= 0:
		return cfg, opt, errors.New("--timeout must be positive")
	}
	opList, err := checkList("--operations", *ops, cat.IDs())
	if err != nil {
		return cfg, opt, err
	}
	codeList, err := checkList("--codes", *codes, cat.Codes())
	if err != nil {
		return cfg, opt, err
	}
	runner, err := mutate.FindRunner(*runnerName, argv)
	if err != nil {
		return cfg, opt, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return cfg, opt, err
	}
	cfg = mutate.Config{
		Argv: argv, Runner: runner, Dir: dir, Tests: splitList(*tests), Operations: opList, Codes: codeList,
		Budget: *budget, Parallel: *parallel, Timeout: *timeout, Catalogue: cat,
	}
	return cfg, opt, nil
}

// dashed reports whether args held a "--" before its last n words (flag drops it).
func dashed(args []string, n int) bool {
	i := len(args) - n - 1
	return i >= 0 && args[i] == "--"
}

// checkList splits a list flag and refuses a name without a * that is not in known,
// and a pattern that matches none of known: a typo must not narrow a gate silently.
func checkList(flagName, s string, known []string) ([]string, error) {
	list := splitList(s)
	for _, x := range list {
		if !strings.Contains(x, "*") {
			if !contains(known, x) {
				return nil, fmt.Errorf("%s: %q is not one%s", flagName, x, yamlcheck.Suggest(x, known))
			}
			continue
		}
		if !slices.ContainsFunc(known, func(k string) bool { return fault.PathMatch(x, k) }) {
			return nil, fmt.Errorf("%s: %q matches none of them (%s, …)", flagName, x, strings.Join(known[:min(len(known), 5)], ", "))
		}
	}
	return list, nil
}
