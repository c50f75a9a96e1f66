// Package truststore trusts hostemu's local CA on this machine, and takes that trust
// back: the system store (a certificate file and the command that rebuilds the bundle,
// as on Debian, Fedora, Arch and openSUSE) and the NSS databases that Chromium and
// Firefox read, creating an empty database where a browser has none yet. It does what
// mkcert's truststore_linux.go and truststore_nss.go do, for hostemu's CA; every
// location and command is a field, so that tests work on throwaway ones.
package truststore

import (
	"bytes"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Options say what to trust and where.
type Options struct {
	// CertPEM is the CA's certificate (PEM); required.
	CertPEM []byte
	// Home is the user's home directory, under which the browsers keep their NSS
	// databases; "" skips them.
	Home string
	// System is the system store; nil skips it (see DetectSystem).
	System *System
	// Certutil is the path of NSS's certutil ("" looks it up in PATH); without it the
	// NSS databases are skipped, and Install says how to get it.
	Certutil string
	// NoNSS skips the NSS databases.
	NoNSS bool
	// Log receives one line per store touched (discarded when nil).
	Log io.Writer
}

// System is a system trust store: a directory of anchor files and the command that
// rebuilds the bundle from it.
type System struct {
	// Dir holds the anchors; the CA goes in <Dir>/<nickname with _ for spaces><Ext>.
	Dir string
	Ext string
	// Command rebuilds the system bundle after a change (update-ca-certificates).
	Command []string
	// Sudo runs the writes and Command through sudo (not root, and sudo exists).
	Sudo bool
}

// systemLayouts are the stores DetectSystem knows, in mkcert's order.
var systemLayouts = []System{
	{Dir: "/etc/pki/ca-trust/source/anchors", Ext: ".pem", Command: []string{"update-ca-trust", "extract"}},
	{Dir: "/usr/local/share/ca-certificates", Ext: ".crt", Command: []string{"update-ca-certificates"}},
	{Dir: "/etc/ca-certificates/trust-source/anchors", Ext: ".crt", Command: []string{"trust", "extract-compat"}},
	{Dir: "/usr/share/pki/trust/anchors", Ext: ".pem", Command: []string{"update-ca-certificates"}},
}

// DetectSystem is this machine's system store, nil when its layout is unknown (or not
// Linux: on macOS and Windows, trust the CA by hand as docs/edge-and-tls.md shows).
func DetectSystem() *System {
	for _, l := range systemLayouts {
		if fi, err := os.Stat(l.Dir); err == nil && fi.IsDir() {
			s := l
			if os.Geteuid() != 0 {
				if _, err := exec.LookPath("sudo"); err == nil {
					s.Sudo = true
				}
			}
			return &s
		}
	}
	return nil
}

// Nickname names the CA in every store: "hostemu CA " and its serial number, so that
// each CA (a new one after the directory was emptied) has its own entry, and uninstall
// removes this one only.
func Nickname(cert *x509.Certificate) string {
	return "hostemu CA " + hex.EncodeToString(cert.SerialNumber.Bytes())
}

// parse reads o.CertPEM.
func (o Options) parse() (*x509.Certificate, error) {
	block, _ := pem.Decode(o.CertPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate to trust")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, errors.New("the certificate is not a CA's")
	}
	return cert, nil
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Install trusts the CA in the system store and in every NSS database found under Home
// (Chromium's ~/.pki/nssdb, created when missing; each Firefox profile, given a
// database when it has none). It goes on after a store fails and returns every failure;
// it fails too when it trusted the CA nowhere.
func Install(o Options) error {
	cert, err := o.parse()
	if err != nil {
		return err
	}
	name := Nickname(cert)
	var errs []error
	done := 0
	if o.System != nil {
		if err := o.System.install(name, o.CertPEM); err != nil {
			errs = append(errs, fmt.Errorf("system store: %w", err))
		} else {
			done++
			o.logf("trusted in the system store: %s", o.System.file(name))
		}
	}
	if !o.NoNSS && o.Home != "" {
		n, err := o.installNSS(name)
		done += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if done == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no trust store to install into: no known system store, and no NSS database (or no certutil)"))
	}
	return errors.Join(errs...)
}

// Uninstall removes the CA from the stores Install uses; a store that does not hold it
// is left alone.
func Uninstall(o Options) error {
	cert, err := o.parse()
	if err != nil {
		return err
	}
	name := Nickname(cert)
	var errs []error
	if o.System != nil {
		if removed, err := o.System.uninstall(name); err != nil {
			errs = append(errs, fmt.Errorf("system store: %w", err))
		} else if removed {
			o.logf("removed from the system store: %s", o.System.file(name))
		}
	}
	if !o.NoNSS && o.Home != "" {
		if err := o.uninstallNSS(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// file is where the CA's anchor goes.
func (s *System) file(name string) string {
	return filepath.Join(s.Dir, strings.ReplaceAll(name, " ", "_")+s.Ext)
}

func (s *System) install(name string, certPEM []byte) error {
	if s.Sudo {
		if out, err := s.command([]string{"tee", s.file(name)}, certPEM); err != nil {
			return fmt.Errorf("sudo tee %s: %v: %s", s.file(name), err, out)
		}
	} else if err := os.WriteFile(s.file(name), certPEM, 0o644); err != nil {
		return fmt.Errorf("%v (run as root, or with sudo installed)", err)
	}
	return s.refresh()
}

func (s *System) uninstall(name string) (removed bool, err error) {
	if _, err := os.Stat(s.file(name)); err != nil {
		return false, nil
	}
	if s.Sudo {
		if out, err := s.command([]string{"rm", "-f", s.file(name)}, nil); err != nil {
			return false, fmt.Errorf("sudo rm %s: %v: %s", s.file(name), err, out)
		}
	} else if err := os.Remove(s.file(name)); err != nil {
		return false, err
	}
	return true, s.refresh()
}

// refresh runs the command that rebuilds the system bundle.
func (s *System) refresh() error {
	if len(s.Command) == 0 {
		return nil
	}
	if out, err := s.command(s.Command, nil); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(s.Command, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// command runs argv, through sudo when the store needs it, with stdin.
func (s *System) command(argv []string, stdin []byte) ([]byte, error) {
	if s.Sudo {
		argv = append([]string{"sudo"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return cmd.CombinedOutput()
}
