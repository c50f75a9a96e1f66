package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hostemu/hostemu/emulator"
)

// validateFiles is emulator.Validate; a variable so tests can replace it.
var validateFiles = emulator.Validate

// validate exits 0 after printing the summary, 1 after printing one problem a line on
// stdout, 2 for a usage error.
func validate(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu validate", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	const use = "Usage: hostemu validate FILE|DIR...\n\nChecks scenario and fixture files (directories: their *.yaml and *.yml files);\nexits 1 with one file:line: problem per problem."
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, use)
			return 0
		}
		fmt.Fprintf(stderr, "hostemu validate: %v\n\n%s\n", flagError(fset, err), use)
		return 2
	}
	if fset.NArg() == 0 {
		fmt.Fprintf(stderr, "hostemu validate: no files given\n\n%s\n", use)
		return 2
	}
	summary, problems := validateFiles(fset.Args())
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stdout, p)
		}
		fmt.Fprintf(stderr, "hostemu validate: %d problem(s)\n", len(problems))
		return 1
	}
	for _, s := range summary {
		fmt.Fprintln(stdout, s)
	}
	return 0
}
