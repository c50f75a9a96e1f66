package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitLimit bounds every wait in these tests; reaching it is a failure, never a pass.
const waitLimit = 10 * time.Second

// lockedBuffer is an io.Writer that is safe to read while a command writes to it and
// that signals every write, so tests wait for output without sleeping.
type lockedBuffer struct {
	mu    sync.Mutex // guards buf
	buf   bytes.Buffer
	wrote chan struct{}
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{wrote: make(chan struct{}, 1)} }

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor returns re's first match in the buffer once it appears; it fails the test if
// done closes first (the writer is gone) or waitLimit passes.
func (b *lockedBuffer) waitFor(tb testing.TB, re *regexp.Regexp, done <-chan struct{}) []string {
	tb.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		select {
		case <-b.wrote:
		case <-done:
			if m := re.FindStringSubmatch(b.String()); m != nil {
				return m
			}
			tb.Fatalf("exited before printing %q; output:\n%s", re, b.String())
		case <-deadline.C:
			tb.Fatalf("no %q within %s; output:\n%s", re, waitLimit, b.String())
		}
	}
}

// listeningLine is serve's first line on stdout: the text banner's, or with --log-format
// json the one record the banner is.
var listeningLine = regexp.MustCompile(`(?m)^(?:hostemu listening on |\{"time":"[^"]*","level":"INFO","msg":"hostemu listening on )(http://[^\s"]+)"?.*$`)

// served is a `run serve` running in a goroutine.
type served struct {
	url            string
	stdout, stderr *lockedBuffer
	cancel         context.CancelFunc
	done           chan struct{}
	code           int // valid once done is closed
}

// startServe runs `hostemu serve args...` in-process and returns once it prints its URL.
func startServe(tb testing.TB, vars map[string]string, args ...string) *served {
	tb.Helper()
	return startCmd(tb, vars, "serve", args...)
}

// startCmd is startServe for a command that serves (serve, replay).
func startCmd(tb testing.TB, vars map[string]string, cmd string, args ...string) *served {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stdout: newLockedBuffer(), stderr: newLockedBuffer(), cancel: cancel, done: make(chan struct{})}
	vars = quietDefaults(vars)
	go func() {
		defer close(s.done)
		s.code = Run(ctx, append([]string{cmd}, args...), env(vars), environ(vars), s.stdout, s.stderr)
	}()
	tb.Cleanup(func() { s.stop(tb) })
	s.url = s.stdout.waitFor(tb, listeningLine, s.done)[1]
	return s
}

// quietDefaults are vars with HTTPS on a free port and the CA in memory unless they say
// otherwise, so that a test neither takes 4743 nor writes to the user's config
// directory.
func quietDefaults(vars map[string]string) map[string]string {
	out := map[string]string{"HOSTEMU_TLS_ADDR": "127.0.0.1:0", "HOSTEMU_CA_DIR": caInMemory}
	for k, v := range vars {
		out[k] = v
	}
	return out
}

// stop cancels serve's context, as a signal would, and returns its exit code.
func (s *served) stop(tb testing.TB) int {
	tb.Helper()
	s.cancel()
	select {
	case <-s.done:
		return s.code
	case <-time.After(waitLimit):
		tb.Fatalf("serve still running %s after cancel; stderr:\n%s", waitLimit, s.stderr.String())
		return -1
	}
}

// runCmd runs one short command in-process.
func runCmd(tb testing.TB, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	out, errOut := newLockedBuffer(), newLockedBuffer()
	if len(args) > 0 && args[0] == "serve" {
		vars = quietDefaults(vars)
	}
	code = Run(context.Background(), args, env(vars), environ(vars), out, errOut)
	return code, out.String(), errOut.String()
}

// httpCall makes one request to base+path, with a bearer token and a JSON body when
// given, and returns the status and the body.
func httpCall(tb testing.TB, base, method, path, token, body string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// goToBuild is the go command, for a test that builds the binary: it skips the test
// under -short (a build takes seconds) or without go in PATH.
func goToBuild(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go tool in PATH")
	}
	return goTool
}
