package truststore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// certutilHelp says where certutil comes from, for the error when it is missing.
const certutilHelp = "install NSS's certutil (Debian, Ubuntu: apt install libnss3-tools; Fedora: dnf install nss-tools; Arch: pacman -S nss; openSUSE: zypper install mozilla-nss-tools; macOS: brew install nss)"

// nssDB is one NSS database: its certutil -d argument ("sql:/path") and whether it
// must be created first.
type nssDB struct {
	dir    string
	prefix string // "sql:" (cert9.db) or "dbm:" (cert8.db, old Firefox)
	create bool
}

func (d nssDB) arg() string { return d.prefix + d.dir }

// nssDatabases are the NSS databases under home: Chromium's (~/.pki/nssdb, and the
// snap's when Chromium is a snap), to be created when missing, since Chromium reads it
// once it exists; and each Firefox profile's (classic and snap), to be created in a
// profile that has none yet (a profile holds prefs.js or times.json).
func nssDatabases(home string) []nssDB {
	var out []nssDB
	chromium := []string{filepath.Join(home, ".pki", "nssdb")}
	if isDir(filepath.Join(home, "snap", "chromium")) {
		chromium = append(chromium, filepath.Join(home, "snap", "chromium", "current", ".pki", "nssdb"))
	}
	for _, dir := range chromium {
		out = append(out, nssDB{dir: dir, prefix: "sql:", create: !isFile(filepath.Join(dir, "cert9.db"))})
	}
	for _, pattern := range []string{
		filepath.Join(home, ".mozilla", "firefox", "*"),
		filepath.Join(home, "snap", "firefox", "common", ".mozilla", "firefox", "*"),
	} {
		dirs, _ := filepath.Glob(pattern)
		for _, dir := range dirs {
			switch {
			case !isDir(dir):
			case isFile(filepath.Join(dir, "cert9.db")):
				out = append(out, nssDB{dir: dir, prefix: "sql:"})
			case isFile(filepath.Join(dir, "cert8.db")):
				out = append(out, nssDB{dir: dir, prefix: "dbm:"})
			case isFile(filepath.Join(dir, "prefs.js")) || isFile(filepath.Join(dir, "times.json")):
				out = append(out, nssDB{dir: dir, prefix: "sql:", create: true})
			}
		}
	}
	return out
}

// certutil is the path of certutil, or an error saying how to get it.
func (o Options) certutil() (string, error) {
	name := o.Certutil
	if name == "" {
		name = "certutil"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New("certutil not found: " + certutilHelp)
	}
	return p, nil
}

// installNSS adds the CA, as a CA trusted for TLS servers (C,,), to every NSS database
// under Home, creating those that need it (certutil -N with an empty password, as a
// browser's first start does), and checks each trusts it. n counts the databases that
// do. Without certutil it fails only where a database already exists: a machine with
// no browser has nothing to trust.
func (o Options) installNSS(name string) (n int, err error) {
	dbs := nssDatabases(o.Home)
	certutil, cerr := o.certutil()
	if cerr != nil {
		for _, db := range dbs {
			if !db.create {
				return 0, cerr
			}
		}
		o.logf("no browser trust store touched: %v", cerr)
		return 0, nil
	}
	tmp, err := os.CreateTemp("", "hostemu-ca-*.pem")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(o.CertPEM); err != nil {
		tmp.Close()
		return 0, err
	}
	tmp.Close()
	var errs []error
	for _, db := range dbs {
		if db.create {
			if err := os.MkdirAll(db.dir, 0o700); err != nil {
				errs = append(errs, err)
				continue
			}
			if out, err := run(certutil, "-N", "-d", db.arg(), "--empty-password"); err != nil {
				errs = append(errs, fmt.Errorf("certutil -N -d %s: %v: %s", db.arg(), err, out))
				continue
			}
		}
		if out, err := run(certutil, "-A", "-d", db.arg(), "-t", "C,,", "-n", name, "-i", tmp.Name()); err != nil {
			errs = append(errs, fmt.Errorf("certutil -A -d %s: %v: %s", db.arg(), err, out))
			continue
		}
		if out, err := run(certutil, "-V", "-d", db.arg(), "-u", "L", "-n", name); err != nil {
			errs = append(errs, fmt.Errorf("certutil -V -d %s: the CA is not trusted after adding it: %v: %s", db.arg(), err, out))
			continue
		}
		n++
		verb := "trusted in"
		if db.create {
			verb = "created, and trusted in,"
		}
		o.logf("%s the NSS database %s", verb, db.arg())
	}
	return n, errors.Join(errs...)
}

// uninstallNSS deletes the CA from every NSS database under Home that holds it.
func (o Options) uninstallNSS(name string) error {
	var dbs []nssDB
	for _, db := range nssDatabases(o.Home) {
		if !db.create {
			dbs = append(dbs, db)
		}
	}
	if len(dbs) == 0 {
		return nil
	}
	certutil, err := o.certutil()
	if err != nil {
		return err
	}
	var errs []error
	for _, db := range dbs {
		if _, err := run(certutil, "-L", "-d", db.arg(), "-n", name); err != nil {
			continue // not there
		}
		if out, err := run(certutil, "-D", "-d", db.arg(), "-n", name); err != nil {
			errs = append(errs, fmt.Errorf("certutil -D -d %s: %v: %s", db.arg(), err, out))
			continue
		}
		o.logf("removed from the NSS database %s", db.arg())
	}
	return errors.Join(errs...)
}

func run(name string, args ...string) ([]byte, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return bytes.TrimSpace(out), err
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
