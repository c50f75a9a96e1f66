package openapi

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command is `hostemu openapi [--control] [--format json|yaml] [--public-url URL]`: it
// prints the hosting and decryption services' description (the control API's with
// --control), YAML as written by default, with servers naming --public-url or hostemu's
// default address. It returns the exit code: 0, or 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hostemu openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	control := fs.Bool("control", false, "print the control API's description")
	format := fs.String("format", "yaml", "json or yaml")
	publicURL := fs.String("public-url", "", "the base URL servers name (default "+defaultServer+")")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hostemu openapi: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	doc := Hosting()
	if *control {
		doc = Control()
	}
	server := strings.TrimSuffix(*publicURL, "/")
	if server == "" {
		server = defaultServer
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
