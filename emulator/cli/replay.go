package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/gctune"
)

const replayUsage = `Usage: hostemu replay FILE [serve flags]

Starts hostemu in the world of a failure bundle (a .hostemu.tgz from GET
/_emulator/bundle or from testkit after a failed test): its state, scenario, faults
with their hits, and journal (entries marked "replayed": true), with a manual clock at
the moment the bundle was taken. Advance the clock to see what happened next.

The bundle's seed, edge domain, CORS origins and rate-limit setting are used unless a
flag given after FILE says otherwise, and HTTPS listens on the port the bundle's
deployment URLs carry when it can (free here, and neither --tls-addr nor
HOSTEMU_TLS_ADDR given); the file is read within --max-state-bytes and --journal-size.
Every other serve flag works as for hostemu serve.`

// replay serves the world of a failure bundle: 0 on a clean stop, 1 when it cannot
// listen, 2 for a bad argument or a bundle that is refused.
func replay(ctx context.Context, args []string, getenv func(string) string, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, replayUsage)
		return 0
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "hostemu replay: the bundle FILE comes first\n\n"+replayUsage)
		return 2
	}
	file := args[0]
	// the bundle is read before serving starts: the collector's room from now on
	defer gctune.Start(gctune.DefaultHeadroom)()
	// the flags after FILE bound what is read (--max-state-bytes, --journal-size); a flag
	// that does not parse is serve's to report, after
	var maxState int64
	var journal int
	if cfg, err := Load(args[1:], getenv); err == nil {
		maxState, journal = cfg.Options.Limits.MaxStateBytes, cfg.Options.JournalSize
	}
	b, err := readBundle(file, maxState, journal)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu replay: %s: %v\n", file, err)
		return 2
	}
	m := b.Manifest
	// the bundle's options first: flags the user gives after FILE win (the last one
	// given counts)
	flags := []string{
		"--seed", strconv.FormatInt(m.Seed, 10),
		"--clock", replayClock(m.Clock.Mode), "--clock-start", m.Clock.Now.Format(time.RFC3339Nano),
		"--rate-limits", m.RateLimits,
	}
	if m.EdgeDomain != "" {
		flags = append(flags, "--edge-domain", m.EdgeDomain)
	}
	if len(m.CORSOrigins) > 0 {
		flags = append(flags, "--cors-origins", strings.Join(m.CORSOrigins, ","))
	}
	where := "the default world"
	if m.Namespace != "" {
		where = "namespace " + m.Namespace
	}
	fmt.Fprintf(stdout, "replaying %s: %s at %s, scenario %s, taken %s by hostemu %s\n",
		file, where, m.Clock.Now.Format(time.RFC3339Nano), m.Scenario, m.CreatedAt.Format(time.RFC3339), m.HostemuVersion)
	printFailure(stdout, file, b.Failure())
	// The deployment URLs carry the port the edge had where the bundle was taken (a
	// test's is often a free port of the moment): HTTPS listens there again, so that
	// they open as given, when --tls-addr is left to its default.
	port := b.EdgePort()
	edge := func(c *Config) {
		addr, why := edgeAddr(c, port)
		if why != "" {
			fmt.Fprintf(stdout, "replaying %s: its deployment URLs carry port %d; %s: open them at HTTPS's port\n", file, port, why)
		}
		if addr == "" {
			port = 0 // nothing to say once HTTPS listens
			return
		}
		c.Options.TLSAddr = addr // a free port if it is taken, as the default does
	}
	// read once: the manifest chooses the flags, the rest goes into the world
	return serveWith(ctx, append(flags, args[1:]...), getenv, environ, stdout, stderr, edge, func(srv *emulator.Server) error {
		if port != 0 {
			if u, err := url.Parse(srv.TLSURL()); err == nil && u.Port() == strconv.Itoa(port) {
				fmt.Fprintf(stdout, "replaying %s: HTTPS on %s, the port its deployment URLs carry\n", file, u.Host)
			} else {
				fmt.Fprintf(stdout, "replaying %s: its deployment URLs carry port %d, which is taken here: open them at HTTPS's port\n", file, port)
			}
		}
		return srv.Emulator().Replay(b)
	})
}

// failureLines bounds the lines of failure.txt the banner prints.
const failureLines = 20

// printFailure prints why the bundle's test failed, when the bundle says (failure.txt),
// its first failureLines lines indented.
func printFailure(w io.Writer, file, failure string) {
	failure = strings.TrimRight(failure, "\n\r\t ")
	if failure == "" {
		return
	}
	lines := strings.Split(failure, "\n")
	fmt.Fprintf(w, "replaying %s: the test failed with:\n", file)
	for i, l := range lines {
		if i == failureLines {
			fmt.Fprintf(w, "    … %d more lines: tar xzf %s failure.txt\n", len(lines)-failureLines, file)
			break
		}
		fmt.Fprintln(w, "    "+strings.TrimRight(l, "\r"))
	}
}

// edgeAddr is the address HTTPS takes for a bundle whose deployment URLs carry port:
// the default's host on that port, or "" and why not (why is "" when there is nothing
// to say: no port, the default's own, or HTTPS's address given by --tls-addr or
// HOSTEMU_TLS_ADDR).
func edgeAddr(c *Config, port int) (addr, why string) {
	if port == 0 || !c.Options.TLSAddrFallback { // the fallback is the default's alone
		return "", ""
	}
	p := strconv.Itoa(port)
	host, def, _ := net.SplitHostPort(c.Options.TLSAddr)
	switch {
	case p == def:
		return "", ""
	case port < 1024:
		return "", "a port below 1024 needs privileges"
	}
	for _, a := range []string{c.Options.Addr, c.Options.ControlAddr, c.Options.CipherAddr} {
		if _, ap, err := net.SplitHostPort(a); err == nil && ap == p {
			return "", "--addr, --control-addr or --cipher-addr has it"
		}
	}
	return net.JoinHostPort(host, p), ""
}

// readBundle reads a bundle file, its state at most maxState bytes (the default bound
// when 0) and the newest journal entries of it up to journal (the bundle reader's
// default when 0).
func readBundle(file string, maxState int64, journal int) (*emulator.Bundle, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return emulator.ReadBundle(f, maxState, journal)
}

// replayClock is the mode a bundle's world replays in: standing where the bundle's world
// stood (manual), or auto if it ran auto, so that it moves on as it did.
func replayClock(mode string) string {
	if mode == string(clock.Auto) {
		return string(clock.Auto)
	}
	return string(clock.Manual)
}
