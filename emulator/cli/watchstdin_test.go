package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeStopsWhenStdinEnds: under --watch-stdin, serve ignores what arrives on its
// standard input and stops cleanly, exit 0, once the input ends (the parent holding the
// pipe died).
func TestServeStopsWhenStdinEnds(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	out, errOut := newLockedBuffer(), newLockedBuffer()
	done := make(chan struct{})
	code := -1
	vars := quietDefaults(nil)
	go func() {
		defer close(done)
		code = Run(withStdin(context.Background(), pr), []string{"serve", "--addr", "127.0.0.1:0", "--watch-stdin"}, env(vars), environ(vars), out, errOut)
	}()
	t.Cleanup(func() { pw.Close(); <-done })
	base := out.waitFor(t, listeningLine, done)[1]
	if _, err := pw.Write([]byte("anything at all\n")); err != nil {
		t.Fatal(err)
	}
	if status, _ := httpCall(t, base, "GET", "/_emulator/health", "", ""); status != http.StatusOK {
		t.Fatalf("health %d while the input is open", status)
	}
	pw.Close()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("serve still running %s after its standard input ended; stderr:\n%s", waitLimit, errOut)
	}
	if code != 0 {
		t.Errorf("exit code %d after the input ended, want 0; stderr:\n%s", code, errOut)
	}
	if s := errOut.String(); !strings.Contains(s, "standard input closed (--watch-stdin)") || !strings.Contains(s, "grace=500ms") || !strings.Contains(s, "msg=stopped") {
		t.Errorf("the log does not say why it stopped, with the short grace, and that it stopped:\n%s", s)
	}
}

// TestServeWithoutWatchStdinIgnoresStdin: without the flag an input that ends at once
// (/dev/null, a closed pipe) stops nothing.
func TestServeWithoutWatchStdinIgnoresStdin(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	pw.Close()
	out, errOut := newLockedBuffer(), newLockedBuffer()
	ctx, cancel := context.WithCancel(withStdin(context.Background(), pr))
	done := make(chan struct{})
	vars := quietDefaults(nil)
	go func() {
		defer close(done)
		Run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, env(vars), environ(vars), out, errOut)
	}()
	t.Cleanup(func() { cancel(); <-done })
	base := out.waitFor(t, listeningLine, done)[1]
	// a second request after the first proves it kept serving past the input's end
	for range 2 {
		if status, _ := httpCall(t, base, "GET", "/_emulator/health", "", ""); status != http.StatusOK {
			t.Fatalf("health %d", status)
		}
	}
	if strings.Contains(errOut.String(), "stopping") {
		t.Errorf("stopped without --watch-stdin:\n%s", errOut)
	}
}

// watchStdinBinary is TestBinary's check of --watch-stdin on the real process: with its
// standard input a pipe this test holds, closing the pipe (what the kernel does when the
// holder dies, SIGKILL included) makes the binary exit within a second, exit 0, and its
// port free again; with a request held in it by a delay fault, still within a second.
func watchStdinBinary(t *testing.T, bin string) {
	for _, held := range []bool{false, true} {
		name := "idle"
		if held {
			name = "a request held"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := &proc{stdout: newLockedBuffer(), stderr: newLockedBuffer(), done: make(chan struct{})}
			p.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
			p.cmd.Env = append(cleanEnv(), "HOSTEMU_TLS_ADDR=127.0.0.1:0", "HOSTEMU_CA_DIR="+caInMemory, "HOSTEMU_WATCH_STDIN=1")
			p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
			stdin, err := p.cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { p.err = p.cmd.Wait(); close(p.done) }()
			t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
			p.url = p.stdout.waitFor(t, listeningLine, p.done)[1]
			if held {
				fault := `{"match":{"method":"GET","path":"/v1/deployments"},"delay":"30s"}`
				if status, body := httpCall(t, p.url, "POST", "/_emulator/faults", "", fault); status != http.StatusCreated {
					t.Fatalf("adding the delay fault: %d %s", status, body)
				}
				go func() {
					req, _ := http.NewRequest(http.MethodGet, p.url+"/v1/deployments", nil)
					req.Header.Set("Authorization", "Bearer hostemu-read")
					if res, err := http.DefaultClient.Do(req); err == nil {
						res.Body.Close()
					}
				}()
				waitFaultHit(t, p.url)
			}
			closed := time.Now()
			stdin.Close()
			select {
			case <-p.done:
			case <-time.After(waitLimit):
				t.Fatalf("still running %s after its standard input closed; stderr:\n%s", waitLimit, p.stderr)
			}
			took := time.Since(closed)
			t.Logf("exited %s after its standard input closed (%s)", took.Round(time.Millisecond), name)
			if took > time.Second {
				t.Errorf("exited %s after its standard input closed, over the documented second", took.Round(time.Millisecond))
			}
			if !held && p.err != nil {
				t.Errorf("exit: %v, want 0; stderr:\n%s", p.err, p.stderr)
			}
			u, _ := url.Parse(p.url)
			ln, err := net.Listen("tcp", u.Host)
			if err != nil {
				t.Fatalf("its port is still taken after it exited: %v", err)
			}
			ln.Close()
		})
	}
}
