package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator"
)

// defaultTLSAddr is where HTTPS listens unless --tls-addr says otherwise: deployment
// URLs carry its port, so that the url the API hands out opens in a browser.
const defaultTLSAddr = "127.0.0.1:4743"

// caInMemory is the --ca-dir value that keeps a new CA in memory for this start only
// (an empty HOSTEMU_CA_DIR counts as unset, so it needs a name): the one a Go caller
// passes as Options.CADir.
const caInMemory = emulator.CAInMemory

// setTLSAddr reads --tls-addr: host:port, or off (or empty) for no HTTPS listener.
func setTLSAddr(c *Config, v string) error {
	if strings.EqualFold(v, "off") {
		v = ""
	}
	return setAddr(&c.Options.TLSAddr, v, false)
}

// setEdgeURLPort reads --edge-url-port: empty, or a port from 1 to 65535.
func setEdgeURLPort(c *Config, v string) error {
	c.Options.EdgeURLPort = 0
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return errors.New("want a port from 1 to 65535, such as 443")
	}
	c.Options.EdgeURLPort = n
	return nil
}

// setCADir reads --ca-dir; :memory: (or an empty flag) is a CA in memory. The default,
// the user's config directory, is found by resolveCADir, since Load reads no files.
func setCADir(c *Config, v string) error {
	if v == caInMemory {
		v = ""
	}
	c.Options.CADir = v
	return nil
}

// userConfigDir is os.UserConfigDir read through getenv, so that tests choose it: on
// Linux and the BSDs $XDG_CONFIG_HOME, else $HOME/.config.
func userConfigDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows", "darwin", "ios", "plan9":
		return os.UserConfigDir()
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("$XDG_CONFIG_HOME is a relative path")
		}
		return d, nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config"), nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
}

// defaultCADir is where the CA is kept when --ca-dir is not given: <user config
// dir>/hostemu/ca, as mkcert keeps its CAROOT, so trusting it once lasts.
func defaultCADir(getenv func(string) string) (string, error) {
	d, err := userConfigDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "hostemu", "ca"), nil
}

// resolveCADir gives the CA its default directory when --ca-dir (and HOSTEMU_CA_DIR)
// was not given. A default that cannot be used (no home, a read-only one in a
// container) is not the user's choice, so it is warned about and a CA in memory
// serves instead (no home: here; a directory that cannot hold the CA: the emulator,
// which reads it once, as Options.CADirFallback says); a --ca-dir the user gave that
// fails stops the start, in Listen.
func (c *Config) resolveCADir(getenv func(string) string, log *slog.Logger) {
	if c.origin["ca-dir"] != "default --ca-dir" {
		return
	}
	dir, err := defaultCADir(getenv)
	if err != nil {
		log.Warn("the local CA is kept in memory, new at every start: set --ca-dir to keep it", "err", err)
		return
	}
	c.Options.CADir, c.Options.CADirFallback = dir, true
}

// caDirOrDefault is dir, else HOSTEMU_CA_DIR's, else the default directory: the CA
// that `hostemu ca` prints, installs and uninstalls, the one serve uses.
func caDirOrDefault(dir string, getenv func(string) string) (string, error) {
	if dir == "" {
		dir = getenv(envName("ca-dir"))
	}
	if dir == caInMemory {
		return "", errors.New("a CA kept in memory lives only as long as its hostemu: fetch a running one's with curl http://127.0.0.1:4700/_emulator/ca.pem")
	}
	if dir != "" {
		return dir, nil
	}
	d, err := defaultCADir(getenv)
	if err != nil {
		return "", fmt.Errorf("no default CA directory (%v): give --ca-dir DIR", err)
	}
	return d, nil
}

// caUsage is hostemu ca's help.
const caUsage = `Usage: hostemu ca [install|uninstall] [--ca-dir DIR] [--system=false] [--nss=false]

With no command, prints the certificate (PEM) of the local CA kept in DIR, creating DIR
and a new CA when it holds none. DIR defaults to HOSTEMU_CA_DIR, else
<user config dir>/hostemu/ca (~/.config/hostemu/ca on Linux), which hostemu serve uses
too unless told otherwise.

  install     trust the CA in the system store (through sudo unless root) and in the
              NSS databases of Chromium and Firefox under $HOME (creating an empty
              one where none exists; needs NSS's certutil); run it as yourself
  uninstall   remove it from those stores

  --system=false   leave the system store alone
  --nss=false      leave the browsers' NSS databases alone`
