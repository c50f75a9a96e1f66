package testkit

import (
	"bytes"
	"context"
	"errors"

	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ArtifactsEnv names the directory failed tests' bundles are written to
// (DefaultArtifacts, in the working directory, when it is unset).
const (
	ArtifactsEnv     = "HOSTEMU_ARTIFACTS"
	DefaultArtifacts = "hostemu-artifacts"
)

// bundleTimeout bounds reading a failed test's bundle.
const bundleTimeout = 30 * time.Second

// Bundle writes this emulator's world as a failure bundle to path (GET
// /_emulator/bundle): its state, faults, journal, recent events, scenarios and
// uploads at this moment. `hostemu replay path` opens it.
func (e *Emulator) Bundle(path string) {
	e.tb.Helper()
	var b []byte
	e.call(http.MethodGet, "/_emulator/bundle", nil, &b)
	if err := os.WriteFile(path, b, 0o600); err != nil { // a world may hold tokens and uploads: the owner's only
		e.tb.Fatalf("testkit: writing the bundle: %v", err)
	}
}

// LoadBundle replaces this emulator's world with the failure bundle at path (PUT
// /_emulator/bundle): a failed run's world, to reproduce it in a test.
func (e *Emulator) LoadBundle(path string) {
	e.tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		e.tb.Fatalf("testkit: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bundleTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, e.r.url+e.r.controlPath("/_emulator/bundle"), bytes.NewReader(b))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/gzip")
	if e.r.controlToken != "" {
		req.Header.Set("Authorization", "Bearer "+e.r.controlToken)
	}
	resp, err := e.r.control.Do(req)
	if err != nil {
		e.tb.Fatalf("testkit: PUT /_emulator/bundle: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var raw bytes.Buffer
		raw.ReadFrom(resp.Body)
		e.tb.Fatalf("testkit: PUT /_emulator/bundle: %v", decodeError(resp.StatusCode, raw.Bytes()))
	}
}

// unsafeFileChars are what a test's name may hold that a file name should not.
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// artifactName is a test's bundle file name: its name made safe for every file system.
func artifactName(test string) string {
	s := strings.Trim(unsafeFileChars.ReplaceAllString(test, "_"), "_.")
	if s == "" {
		s = "test"
	}
	if len(s) > 180 {
		s = s[:180]
	}
	return s + ".hostemu.tgz"
}

// failureText is failure.txt of a failed Go test's bundle. Go's testing package tells
// a cleanup that the test failed (Failed), not why: the message is in the test's log.
func failureText(test string) string {
	return test + " failed (testing.T.Failed() is true).\n\n" +
		"Go's testing package does not give the failure's message to the code that writes this bundle:\n" +
		"read it in the test's log (go test -v), where this bundle's path is printed too.\n"
}

// saveOnFailure writes the world's bundle when tb failed, and logs where and the
// command that replays it. Passing tests write nothing, and neither does a test under
// hostemu mutate (a killed mutant is a failure by design), as in the JS and Python
// testkits.
func (r *remote) saveOnFailure(tb testing.TB) {
	if !tb.Failed() || os.Getenv(MutantEnv) != "" {
		return
	}
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		dir = DefaultArtifacts
	}
	ctx, cancel := context.WithTimeout(context.Background(), bundleTimeout)
	defer cancel()
	var b []byte
	err := r.do(ctx, http.MethodPost, "/_emulator/bundle", map[string]string{"failure": failureText(tb.Name())}, &b)
	var old *APIError
	if errors.As(err, &old) && (old.Status == http.StatusNotFound && old.Code == "not_found" || old.Status == http.StatusMethodNotAllowed) {
		err = r.do(ctx, http.MethodGet, "/_emulator/bundle", nil, &b) // a hostemu from before failure.txt
	}
	if err != nil {
		tb.Logf("testkit: the test failed, but its world's bundle could not be read: %v", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Logf("testkit: the test failed, but %s could not be made for its bundle: %v", dir, err)
		return
	}
	path := filepath.Join(dir, artifactName(tb.Name()))
	if err := os.WriteFile(path, b, 0o600); err != nil { // a world may hold tokens and uploads: the owner's only
		tb.Logf("testkit: the test failed, but its bundle could not be written: %v", err)
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	arg := shellArg(path)
	tb.Logf("hostemu: this test's world is saved in %s (%d bytes); open it where it stood with:\n\thostemu replay %s\n(or: go run github.com/hostemu/hostemu/cmd/hostemu@latest replay %s)", path, len(b), arg, arg)
}

// plainPath matches a path a shell reads as one word as it is.
var plainPath = regexp.MustCompile(`^[A-Za-z0-9/._:,@+=-]+$`)

// shellArg is path as the replay command prints it, so that it works pasted into a
// shell: as it is when it is plain, else in double quotes (as the JS testkit prints
// it; cmd, PowerShell and POSIX shells read them alike) unless it holds a character
// that double quotes leave special, then in single quotes, POSIX-style.
func shellArg(path string) string {
	switch {
	case plainPath.MatchString(path):
		return path
	case !strings.ContainsAny(path, "\"$`!"):
		return `"` + path + `"`
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
