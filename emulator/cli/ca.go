package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hostemu/hostemu/emulator/internal/tlsca"
)

// caCommand prints the certificate of the CA kept in --ca-dir (or HOSTEMU_CA_DIR),
// creating it when the directory holds none, so that a developer can trust it before
// the first start: hostemu ca --ca-dir ~/.hostemu-ca > hostemu-ca.pem. 0 on success, 1
// when the directory cannot be read or written, 2 for bad arguments.
func caCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu ca", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	dir := fset.String("ca-dir", "", "")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, caUsage)
			return 0
		}
		fmt.Fprintf(stderr, "hostemu ca: %v\n", flagError(fset, err))
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "hostemu ca: unexpected argument %q\n", fset.Arg(0))
		return 2
	}
	d, err := caDirOrDefault(*dir, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu ca: %v\n", err)
		return 2
	}
	ca, err := tlsca.Load(d)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu ca: %v\n", err)
		return 1
	}
	if msg := ca.Repaired(); msg != "" {
		fmt.Fprintf(stderr, "hostemu ca: warning: %s\n", msg)
	}
	stdout.Write(ca.CertPEM())
	return 0
}
