package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// healthTimeout bounds the whole health request; tests shorten it.
var healthTimeout = 2 * time.Second

const healthPath = "/_emulator/health"

// healthcheck exits 0 when the health route answers 200 within healthTimeout, else 1
// (1 for bad arguments too: Docker reserves 2 in a HEALTHCHECK).
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("hostemu healthcheck", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	base := fset.String("url", "", "")
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: hostemu healthcheck [--url URL]\n\nExits 0 when URL/_emulator/health answers 200 within 2 s, else 1.\nURL defaults to http:// + HOSTEMU_ADDR (0.0.0.0 and :: read as 127.0.0.1; default 127.0.0.1:4700).")
			return 0
		}
		fmt.Fprintf(stderr, "hostemu healthcheck: %v\n", flagError(fset, err))
		return 1
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "hostemu healthcheck: unexpected argument %q\n", fset.Arg(0))
		return 1
	}
	target, err := healthURL(*base, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hostemu healthcheck: %v\n", err)
		return 1
	}
	if err := checkHealth(ctx, target); err != nil {
		fmt.Fprintf(stderr, "hostemu healthcheck: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "healthy: %s\n", target)
	return 0
}

func checkHealth(ctx context.Context, target string) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	// Straight to the emulator: no proxy from the environment, no pooled connection.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("GET %s: no answer within %s", target, healthTimeout)
		}
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", target, resp.Status)
	}
	return nil
}

// healthURL is the health route under --url (a base URL, host:port, or the health URL
// itself), else under HOSTEMU_ADDR with a wildcard host read as 127.0.0.1.
func healthURL(base string, getenv func(string) string) (string, error) {
	u, err := baseURL(base, healthPath, getenv)
	if err != nil {
		return "", err
	}
	return u + healthPath, nil
}

// baseURL is hostemu's address for a command that talks to a running one: --url (a base
// URL, host:port, or a URL ending in suffix, which is cut), else HOSTEMU_ADDR with a
// wildcard host read as 127.0.0.1. It has no trailing slash.
func baseURL(base, suffix string, getenv func(string) string) (string, error) {
	if base == "" {
		addr := getenv("HOSTEMU_ADDR")
		if addr == "" {
			addr = "127.0.0.1:4700"
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("HOSTEMU_ADDR %q: want host:port (or pass --url)", addr)
		}
		if port == "0" || port == "" {
			return "", fmt.Errorf("HOSTEMU_ADDR %q names no fixed port; pass --url", addr)
		}
		switch host {
		case "", "0.0.0.0", "::":
			host = "127.0.0.1"
		}
		return "http://" + net.JoinHostPort(host, port), nil
	}
	raw := base
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--url %q: want a base URL such as http://127.0.0.1:4700", base)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), suffix)
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return strings.TrimRight(u.String(), "/"), nil
}
