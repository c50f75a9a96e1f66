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
	"github.com/hostemu/hostemu/emulator/internal/hugeheap"
)

const replayUsage = `Usage: hostemu replay FILE [serve flags]

Starts hostemu in the world of a failure bundle (a .hostemu.tgz from GET
/_emulator/bundle or from testkit after a failed test): its state, scenario, faults
with their hits, and journal (entries marked "replayed": true), with a manual clock at
the moment the bundle was taken. Advance the clock to see what happened next.

The bundle's seed and rate-limit setting are used unless a flag given after FILE says
otherwise. Its edge domain and CORS origins too, but only when they widen nothing: an
edge domain under .localhost, .test, .example or .invalid, or example.com/net/org, and
loopback CORS origins; others are replaced by this process's settings, and it says so
(give --edge-domain or --cors-origins after FILE to choose). The listener of the
bundle's deployment URLs' scheme listens on their port when it can (free here, and
--tls-addr for https URLs, --addr for http ones, not given), so that they open as
written; the default --addr takes a free port when 4700 is in use. The file is read
within --max-state-bytes and --journal-size.
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
	// the bundle's world is read and put in place before serving starts, all of it
	// kept: the collector is given room for it until then (serving has its own)
	world := bundleWorld(file)
	stopRoom := gctune.Room(readRoom(world))
	defer stopRoom()
	// and with huge pages under it where the kernel gives them on request (hugeheap)
	stopHuge := hugeheap.Allow()
	defer stopHuge()
	hugeheap.Reserve(world)
	// the flags after FILE, with the variables and defaults: this process's own
	// settings. They bound what is read (--max-state-bytes, --journal-size); a flag that
	// does not parse is serve's to report, after.
	own, ownErr := Load(args[1:], getenv)
	var maxState int64
	var journal int
	if ownErr == nil {
		maxState, journal = own.Options.Limits.MaxStateBytes, own.Options.JournalSize
	}
	b, err := readBundle(file, maxState, journal)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu replay: %s: %v\n", file, err)
		return 2
	}
	m := b.Manifest
	say := func(format string, a ...any) { fmt.Fprintf(stdout, "replaying "+file+": "+format+"\n", a...) }
	// the bundle's options first: flags the user gives after FILE win (the last one
	// given counts)
	flags := []string{
		"--seed", strconv.FormatInt(m.Seed, 10),
		"--clock", replayClock(m.Clock.Mode), "--clock-start", m.Clock.Now.Format(time.RFC3339Nano),
		"--rate-limits", m.RateLimits,
	}
	where := "the default world"
	if m.Namespace != "" {
		where = "namespace " + m.Namespace
	}
	say("%s at %s, scenario %s, taken %s by hostemu %s",
		where, m.Clock.Now.Format(time.RFC3339Nano), m.Scenario, m.CreatedAt.Format(time.RFC3339), m.HostemuVersion)
	printFailure(stdout, file, b.Failure())
	trusted, notes := bundleTrust(m, own, ownErr == nil)
	flags = append(flags, trusted...)
	for _, n := range notes {
		say("%s", n)
	}
	// The deployment URLs carry the scheme and port the edge had where the bundle was
	// taken (a test's is often a free port of the moment): that listener takes that port
	// again, so that they open as given, when its address is left to its default.
	edgeURL := b.EdgeURL()
	scheme, port := "", 0
	if edgeURL != nil {
		scheme, port = edgeURL.Scheme, urlPort(edgeURL)
	}
	edgeDomain := "" // the replay's, once the flags are read
	edge := func(c *Config) {
		edgeDomain = c.Options.EdgeDomain
		// the default address falls back to a free port, so that the printed replay
		// command works beside a hostemu that holds 4700
		c.Options.AddrFallback = c.origin["addr"] == "default --addr"
		addr, why := edgeAddr(c, scheme, port)
		if why != "" {
			say("its deployment URLs carry port %d; %s: open them at %s's port", port, why, strings.ToUpper(scheme))
		}
		if addr == "" {
			port = 0 // nothing to say once it listens
			return
		}
		if scheme == "http" {
			c.Options.Addr = addr // a free port if it is taken, as the default does
		} else {
			c.Options.TLSAddr = addr
		}
	}
	// read once: the manifest chooses the flags, the rest goes into the world
	return serveWith(ctx, append(flags, args[1:]...), getenv, environ, stdout, stderr, edge, func(srv *emulator.Server) error {
		if port != 0 {
			at := srv.TLSURL()
			if scheme == "http" {
				at = srv.URL()
			}
			u, err := url.Parse(at)
			switch {
			case err != nil:
			case u.Port() == strconv.Itoa(port):
				say("%s on %s, the port its deployment URLs carry", strings.ToUpper(scheme), u.Host)
			default:
				moved := *edgeURL
				moved.Host = net.JoinHostPort(onEdge(edgeURL.Hostname(), m.EdgeDomain, edgeDomain), u.Port())
				say("its deployment URLs carry port %d, which is taken here: open them at port %s (%s)", port, u.Port(), moved.String())
			}
		}
		err := srv.Emulator().Replay(b)
		stopRoom()
		stopHuge()
		return err
	})
}

// readRoom is the room the collector is given while a bundle file is read and replayed,
// for its world's estimate (bundleWorld), at least gctune's default. The heap then grows
// to the world's size with a collection or none, rather than one each time it doubles,
// each marking all that was read so far.
func readRoom(world uint64) uint64 {
	return max(world, gctune.DefaultHeadroom)
}

// bundleWorld estimates the heap the bundle file's world fills as it is read and put in
// place: its state is about four times the file's size as text and about as much again
// decoded, all of it kept, so eight times the file's size, at most 1 GiB (no floor:
// a small bundle asks for no huge pages, hugeheap).
func bundleWorld(file string) uint64 {
	var size int64
	if fi, err := os.Stat(file); err == nil {
		size = fi.Size()
	}
	return uint64(min(8*size, 1<<30))
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

// onEdge is host, a deployment host under the bundle's edge domain from, under the
// replay's, to: where the replay serves it.
func onEdge(host, from, to string) string {
	if from != "" && to != "" && strings.HasSuffix(host, "."+from) {
		return strings.TrimSuffix(host, from) + to
	}
	return host
}

// urlPort is the port u names, 0 when it names none: URLs without a port (the
// scheme's own, 443 or 80, behind a reverse proxy or --edge-url-port) ask nothing of
// the replay's listeners.
func urlPort(u *url.URL) int {
	p, _ := strconv.Atoi(u.Port())
	return p
}

// edgeAddr is the address the listener of a bundle's deployment URLs (scheme://…:port)
// takes: HTTPS's for https, the hosting service's (--addr) for http, on its default's
// host (the default itself when it has that port); or "" and why not (why is "" when
// there is nothing to say: no port, or the listener's address given by a flag or a
// variable, which is the user's to choose).
func edgeAddr(c *Config, scheme string, port int) (addr, why string) {
	cur, flag, others := c.Options.TLSAddr, "tls-addr", []string{"addr", "control-addr", "cipher-addr"}
	if scheme == "http" {
		cur, flag, others = c.Options.Addr, "addr", []string{"tls-addr", "control-addr", "cipher-addr"}
	}
	if port == 0 || c.origin[flag] != "default --"+flag { // the move is the default's alone
		return "", ""
	}
	p := strconv.Itoa(port)
	host, def, _ := net.SplitHostPort(cur)
	switch {
	case p == def:
		return cur, "" // where it goes already
	case port < 1024:
		return "", "a port below 1024 needs privileges"
	}
	for _, o := range others {
		if o == "tls-addr" && c.Options.TLSAddrFallback {
			continue // the default HTTPS address moves out of the way
		}
		if _, ap, err := net.SplitHostPort(c.addrOf(o)); err == nil && ap == p {
			return "", "--" + o + " has it"
		}
	}
	return net.JoinHostPort(host, p), ""
}

// addrOf is the address setting of a listener flag.
func (c *Config) addrOf(flag string) string {
	switch flag {
	case "addr":
		return c.Options.Addr
	case "tls-addr":
		return c.Options.TLSAddr
	case "control-addr":
		return c.Options.ControlAddr
	case "cipher-addr":
		return c.Options.CipherAddr
	}
	return ""
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
