package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// openapiCmd is `hostemu openapi [--control] [--format json|yaml] [--public-url URL]`:
// it prints the hosting and decryption services' description (the control API's with
// --control), YAML as written by default, with servers naming --public-url (read as
// serve reads it) or hostemu's default address. It returns the exit code: 0, or 2 for a
// usage error.
func openapiCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hostemu openapi", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are flagError's; -h prints the usage
	control := fs.Bool("control", false, "print the control API's description")
	format := fs.String("format", "yaml", "json or yaml")
	publicURL := fs.String("public-url", "", "the base URL servers name (default "+openapi.DefaultServer+")")
	if err := fs.Parse(args); err != nil {
		if err = flagError(fs, err); errors.Is(err, errHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return 2
		}
		fmt.Fprintf(stderr, "hostemu openapi: %v\n", err)
		return 2
	}
	// the rule serve's --public-url follows: the URL is written into every server
	server, err := parsePublicURL(*publicURL)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu openapi: invalid --public-url %q: %v\n", *publicURL, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hostemu openapi: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	doc := openapi.Hosting()
	if *control {
		doc = openapi.Control()
	}
	if server == "" {
		server = openapi.DefaultServer
	}
	switch *format {
	case "json":
		stdout.Write(append(doc.JSON(server), '\n'))
	case "yaml":
		stdout.Write(doc.YAML(server))
	default:
		fmt.Fprintf(stderr, "hostemu openapi: --format must be json or yaml, not %q\n", *format)
		return 2
	}
	return 0
}
