package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hostemu/hostemu/emulator/internal/tlsca"
	"github.com/hostemu/hostemu/emulator/internal/truststore"
)

// caDispatch runs `hostemu ca ...`: install and uninstall trust the CA on this machine
// (caTrust); anything else prints it (caCommand).
func caDispatch(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "install" || args[0] == "uninstall") {
		return caTrust(args[0], args[1:], getenv, stdout, stderr)
	}
	return caCommand(args, getenv, stdout, stderr)
}

// trustSystem is the system store caTrust uses: the machine's (a variable, so that
// tests put a temporary directory in its place).
var trustSystem = truststore.DetectSystem

// caTrust runs hostemu ca install|uninstall: the CA of --ca-dir (default the user
// config directory's, which serve uses) trusted in, or removed from, the system store
// (--system=false skips it) and the NSS databases of Chromium and Firefox under $HOME
// (--nss=false skips them). 0 on success, 1 when a store failed, 2 for bad arguments.
func caTrust(verb string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu ca "+verb, flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	dir := fset.String("ca-dir", "", "")
	system := fset.Bool("system", true, "")
	nss := fset.Bool("nss", true, "")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, caUsage)
			return 0
		}
		fmt.Fprintf(stderr, "hostemu ca %s: %v\n", verb, flagError(fset, err))
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "hostemu ca %s: unexpected argument %q\n", verb, fset.Arg(0))
		return 2
	}
	d, err := caDirOrDefault(*dir, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu ca %s: %v\n", verb, err)
		return 2
	}
	ca, err := tlsca.Load(d)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu ca %s: %v\n", verb, err)
		return 1
	}
	o := truststore.Options{CertPEM: ca.CertPEM(), Home: getenv("HOME"), NoNSS: !*nss, Log: stdout}
	if *system {
		if o.System = trustSystem(); o.System == nil {
			fmt.Fprintln(stdout, "no known system trust store on this machine: trust "+d+"/ca.pem by hand (see docs/edge-and-tls.md)")
		}
	}
	if verb == "install" {
		err = truststore.Install(o)
	} else {
		err = truststore.Uninstall(o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hostemu ca %s: %v\n", verb, err)
		return 1
	}
	if verb == "install" {
		fmt.Fprintf(stdout, "the CA of %s is trusted: restart the browsers to see it\n", d)
	}
	return 0
}
