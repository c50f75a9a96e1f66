package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinary builds the command as the container does (static, CGO_ENABLED=0, version
// stamped) and checks what only a real process shows: the static binary, version
// stamping, and a clean exit on SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hostemu")
	build := exec.Command(goTool, "build", "-trimpath",
		"-ldflags", "-s -w -X main.version=v9.9.9-test -X main.commit=abc1234", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("static", func(t *testing.T) {
		t.Parallel()
		f, err := elf.Open(bin)
		if err != nil {
			t.Skipf("not an ELF binary on %s: %v", runtime.GOOS, err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the binary asks for a dynamic loader: it is not static")
			}
		}
	})

	t.Run("version stamped", func(t *testing.T) {
		t.Parallel()
		out, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.Contains(string(out), "hostemu v9.9.9-test\ncommit: abc1234\n") {
			t.Fatalf("version: %v\n%s", err, out)
		}
	})

	t.Run("exits 0 on SIGTERM", func(t *testing.T) {
		t.Parallel()
		p := startBinary(t, bin)
		resp, err := http.Get(p.url + "/_emulator/health")
		if err != nil {
			t.Fatalf("the process does not answer: %v", err)
		}
		resp.Body.Close()
		p.terminate(t)
	})

	t.Run("healthcheck against a live process", func(t *testing.T) {
		t.Parallel()
		p := startBinary(t, bin)
		if resp, err := http.Get(p.url + "/_emulator/health"); err != nil || resp.StatusCode != http.StatusOK {
			t.Skipf("the emulator does not serve GET /_emulator/health yet (%v)", statusOf(resp, err))
		}
		u, _ := url.Parse(p.url)
		check := exec.Command(bin, "healthcheck")
		check.Env = append(cleanEnv(), "HOSTEMU_ADDR=0.0.0.0:"+u.Port())
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("healthcheck with HOSTEMU_ADDR: %v\n%s", err, out)
		}
		if out, err := exec.Command(bin, "healthcheck", "--url", p.url).CombinedOutput(); err != nil {
			t.Errorf("healthcheck --url: %v\n%s", err, out)
		}
		p.terminate(t)
	})

	t.Run("in-flight request completes on SIGTERM", func(t *testing.T) {
		t.Parallel()
		p := startBinary(t, bin)
		// Hold a request in the server with a delay fault, SIGTERM while it is held,
		// and expect both its answer and exit code 0.
		fault := `{"match":{"method":"GET","path":"/v1/deployments"},"delay":"1s"}`
		resp, err := http.Post(p.url+"/_emulator/faults", "application/json", strings.NewReader(fault))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Skipf("needs the delay fault of POST /_emulator/faults, not served yet (%v)", statusOf(resp, err))
		}
		resp.Body.Close()

		answered := make(chan error, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, p.url+"/v1/deployments", nil)
			req.Header.Set("Authorization", "Bearer hostemu-read")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
			answered <- err
		}()
		waitFaultHit(t, p.url)
		p.terminate(t)
		if err := <-answered; err != nil {
			t.Errorf("the in-flight request failed: %v", err)
		}
	})
}

// proc is a running hostemu binary.
type proc struct {
	cmd            *exec.Cmd
	url            string
	stdout, stderr *lockedBuffer
	done           chan struct{} // closed when the process has exited
	err            error         // Wait's result, valid once done is closed
}

func startBinary(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{stdout: newLockedBuffer(), stderr: newLockedBuffer(), done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	p.cmd.Env = cleanEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	p.url = p.stdout.waitFor(t, listeningLine, p.done)[1]
	return p
}

// terminate sends SIGTERM and expects exit code 0 within 5 s.
func (p *proc) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM; stderr:\n%s", p.stderr)
	}
	if p.err != nil {
		t.Fatalf("after SIGTERM: %v (after %s); stderr:\n%s", p.err, time.Since(start), p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "msg=stopped") {
		t.Errorf("no stopped log line:\n%s", p.stderr)
	}
}

// waitFaultHit polls the control API until a fault has fired once.
func waitFaultHit(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		var list struct {
			Faults []struct {
				Hits int `json:"hits"`
			} `json:"faults"`
		}
		if resp, err := http.Get(base + "/_emulator/faults"); err == nil {
			json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
		}
		for _, f := range list.Faults {
			if f.Hits > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delay fault never fired within %s", waitLimit)
		}
	}
}

// cleanEnv is the test's environment without HOSTEMU_* variables.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOSTEMU_") {
			out = append(out, kv)
		}
	}
	return out
}

func statusOf(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return resp.Status
}
