package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Main runs the command line of the process and exits with its code. b is what the
// linker stamped into cmd/hostemu.
func Main(b Build) {
	stamped = b
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		// After the first signal, restore the default handling so that a second
		// Ctrl-C during a slow shutdown kills the process.
		<-ctx.Done()
		stop()
	}()
	os.Exit(Run(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdout, os.Stderr))
}

// Run is the whole command: it dispatches args to a command and returns the exit code
// (0 success, 1 failure, 2 usage error). ctx ends on SIGTERM or SIGINT. getenv reads a
// variable; environ lists them all ("NAME=value"), for the warning about unknown ones.
func Run(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) int {
	cmd, rest := "serve", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, rest = args[0], args[1:]
	}
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			cmd = "help"
		case "-version", "--version":
			cmd, rest = "version", args[1:]
		}
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, environ, stdout, stderr)
	case "validate":
		return validate(rest, stdout, stderr)
	case "ca":
		return caDispatch(rest, getenv, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, rest, getenv, stdout, stderr)
	case "replay":
		return replay(ctx, rest, getenv, environ, stdout, stderr)
	case "coverage":
		return coverageCmd(ctx, rest, getenv, stdout, stderr)
	case "mutate":
		return mutateCmd(ctx, rest, stdout, stderr)
	case "openapi":
		return openapiCmd(rest, stdout, stderr)
	case "version":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "hostemu: version takes no arguments, got %q\n", rest[0])
			return 2
		}
		printVersion(stdout)
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "hostemu: unknown command %q\n\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `hostemu emulates the hosting and decryption services for local development and CI.

Commands:
  hostemu [serve] [flags]        start the emulator (the default command)
  hostemu validate FILE|DIR...   check scenario and fixture files; exit 1 with one
                                 file:line: problem per problem
  hostemu healthcheck [--url U]  exit 0 when /_emulator/health answers 200 within 2 s,
                                 else 1; U defaults to HOSTEMU_ADDR (0.0.0.0 read as 127.0.0.1)
  hostemu replay FILE [flags]    start in the world of a failure bundle (.hostemu.tgz): its
                                 state, faults and journal, a manual clock where it stood
  hostemu coverage [--url U] [--namespaces all] [--min PCT] [--format text|json|markdown|junit]
                                 print which operations, answers and lifecycle edges
                                 clients exercised; exit 1 under --min (see --help)
  hostemu mutate [flags] -- COMMAND [ARGS...]
                                 run a test suite once per documented error answer of each
                                 operation each test called: would the tests notice? (see --help)
  hostemu ca [--ca-dir DIR]      print the certificate of the local CA kept in DIR
                                 (HOSTEMU_CA_DIR, else <user config dir>/hostemu/ca)
  hostemu ca install|uninstall   trust the CA in the system store and the NSS databases
                                 of Chromium and Firefox, or take that trust back
  hostemu openapi [--control] [--format json|yaml] [--public-url URL]
                                 print the OpenAPI 3.1 description of the hosting and
                                 decryption APIs, or with --control of the control API
  hostemu version                print version, commit and Go version
  hostemu help                   print this help

`)
	serveUsage(w)
}
