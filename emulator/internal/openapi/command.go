package openapi

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Command is `hostemu openapi [--control] [--format json|yaml] [--public-url URL]`: it
// prints the hosting and decryption services' description (the control API's with
// --control), YAML as written by default, with servers naming --public-url or hostemu's
// default address. It returns the exit code: 0, or 2 for a usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hostemu openapi", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are reworded below; -h prints the usage
	control := fs.Bool("control", false, "print the control API's description")
	format := fs.String("format", "yaml", "json or yaml")
	publicURL := fs.String("public-url", "", "the base URL servers name (default "+defaultServer+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return 2
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			if best := yamlcheck.Closest(strings.TrimLeft(name, "-"), names); best != "" {
				msg = fmt.Sprintf("unknown flag %s (did you mean --%s?)", name, best)
			} else {
				msg = fmt.Sprintf("unknown flag %s (see hostemu openapi -h)", name)
			}
		}
		fmt.Fprintf(stderr, "hostemu openapi: %s\n", msg)
		return 2
	}
	// the rule serve's --public-url follows: the URL is written into every server
	server, err := ParsePublicURL(*publicURL)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu openapi: invalid --public-url %q: %v\n", *publicURL, err)
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

// ParsePublicURL reads a --public-url, serve's and this command's: "" for none, else an
// absolute http(s) URL with a host and no user, query or fragment, its trailing slashes
// stripped.
func ParsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("want an absolute http:// or https:// URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", errors.New("want a base URL without user, query or fragment")
	}
	return strings.TrimRight(v, "/"), nil
}
