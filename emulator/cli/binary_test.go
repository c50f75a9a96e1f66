package cli

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/statetest"
)

// TestBinary builds the command as the container does (static, CGO_ENABLED=0, version
// stamped) and checks what only a real process shows: the static binary, version
// stamping, and a clean exit on SIGTERM.
func TestBinary(t *testing.T) {
	goTool := goToBuild(t)
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hostemu")
	build := exec.Command(goTool, "build", "-trimpath", "-tags", "nomsgpack", // as cmd/hostemu/binaries.sh and the Dockerfile build it
		"-ldflags", "-s -w -X main.version=v9.9.9-test -X main.commit=abc1234", "-o", bin, "../../cmd/hostemu")
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

	t.Run("no gofakeit linked", func(t *testing.T) {
		// the generator draws gofakeit's words without it (fixture/words.go): linking any
		// of its packages again runs their inits at every start (issue #38)
		t.Parallel()
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range info.Deps {
			if strings.Contains(m.Path, "gofakeit") {
				t.Errorf("the binary links %s %s: a package of it is imported again (go list -deps ./cmd/hostemu | grep gofakeit)", m.Path, m.Version)
			}
		}
	})

	t.Run("no template execution linked", func(t *testing.T) {
		// a reachable template execution reaches reflect.Value.MethodByName, which makes
		// the linker keep every exported method of every reachable type: the dashboard's
		// pages are rendered by go generate and the docs pages written in plain Go so that
		// none is (issue #38). The symbols are read from an unstripped build.
		t.Parallel()
		if runtime.GOOS != "linux" {
			t.Skip("reads the ELF symbol table")
		}
		unstripped := filepath.Join(t.TempDir(), "hostemu")
		build := exec.Command(goTool, "build", "-trimpath", "-tags", "nomsgpack", "-o", unstripped, "../../cmd/hostemu")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		f, err := elf.Open(unstripped)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		var linked []string
		for _, s := range syms {
			if s.Name == "reflect.Value.MethodByName" || strings.HasPrefix(s.Name, "text/template.(*state).eval") {
				linked = append(linked, s.Name)
			}
		}
		if len(linked) > 0 {
			t.Errorf("something executes a template again: the binary links %s", strings.Join(linked, ", "))
		}
	})

	t.Run("version stamped", func(t *testing.T) {
		t.Parallel()
		out, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.Contains(string(out), "hostemu v9.9.9-test\ncommit: abc1234\n") {
			t.Fatalf("version: %v\n%s", err, out)
		}
	})

	t.Run("resident memory bounded under imports and namespaces", func(t *testing.T) {
		t.Parallel()
		if runtime.GOOS != "linux" {
			t.Skip("peak resident memory is read from /proc")
		}
		p := startBinary(t, bin, "--max-body-bytes-in-flight", "64MiB", "--max-world-bytes", "64MiB")
		state := statetest.BigJSON(7000) // 32 MB of JSON
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("PUT", p.url+"/_emulator/state", bytes.NewReader(state))
				req.Header.Set("Content-Type", "application/json")
				if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
					t.Errorf("an import: %v %v", res, err)
				} else {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
		}
		wg.Wait()
		big := `{"fixtures":{"generate":{"projects":1000,"deployments_per_project":10,"domains_per_project":10}}}`
		statuses := []int{}
		for range 4 {
			res, err := http.Post(p.url+"/_emulator/namespaces", "application/json", strings.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			statuses = append(statuses, res.StatusCode)
		}
		if statuses[0] != 201 || statuses[3] != 507 {
			t.Errorf("namespaces of ~27 MB each under --max-world-bytes 64MiB: %v", statuses)
		}
		peak := peakRSS(t, p.cmd.Process.Pid)
		t.Logf("peak RSS %d MiB after 4 concurrent imports of a %d MB state and namespaces up to --max-world-bytes (statuses %v)", peak>>20, len(state)>>20, statuses)
		// the budget and the world bound, each with the garbage collector's headroom (2×),
		// two states' text in flight, and 128 MiB for the runtime, the server's own world and
		// the fixtures
		if limit := int64(2*(64+64)+2*len(state)>>20+128) << 20; peak > limit {
			t.Errorf("peak RSS %d MiB, over the documented %d MiB", peak>>20, limit>>20)
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

	t.Run("exits within a second when its standard input closes (--watch-stdin)", func(t *testing.T) {
		t.Parallel()
		watchStdinBinary(t, bin)
	})

	t.Run("stops when the go run that started it is killed", func(t *testing.T) {
		t.Parallel()
		goRunDies(t, bin)
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
	// its standard input a pipe this process holds: a test binary killed on a timeout
	// leaves no hostemu behind (--watch-stdin)
	p.cmd.Env = append(cleanEnv(), "HOSTEMU_TLS_ADDR=127.0.0.1:0", "HOSTEMU_CA_DIR="+caInMemory, "HOSTEMU_WATCH_STDIN=1")
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if _, err := p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
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

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc")
	return 0
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

// goRunDies: a hostemu whose parent is the go command (`go run ./cmd/hostemu`), with no
// --watch-stdin, stops cleanly when that parent is killed with SIGKILL: go passes no
// signal on and does not take its child along. The parent here is a shell script named
// go, which is what /proc shows for a go run.
func goRunDies(t *testing.T, bin string) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	goRun := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(goRun, []byte("#!/bin/sh\n\"$@\"\nexit $?\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	launcher := exec.Command(goRun, bin, "serve", "--addr", "127.0.0.1:0")
	launcher.Env = append(cleanEnv(), "HOSTEMU_TLS_ADDR=127.0.0.1:0", "HOSTEMU_CA_DIR="+caInMemory)
	stdout, stderr := newLockedBuffer(), newLockedBuffer()
	// buffers, not files: Wait returns once every writer of the pipes, hostemu too,
	// has closed them, so it tells when hostemu is gone
	launcher.Stdout, launcher.Stderr = stdout, stderr
	// a group of its own, launcher and hostemu: whatever fails below, the cleanup kills
	// both
	launcher.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { launcher.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done: // both gone: the group's id may be another's by now
		default:
			syscall.Kill(-launcher.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	base := stdout.waitFor(t, listeningLine, done)[1]
	if err := launcher.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_, err := http.Get(base + "/_emulator/health")
		t.Fatalf("hostemu still running 5 s after the go run that started it was killed (health: %v); stderr:\n%s", err, stderr)
	}
	if s := stderr.String(); !strings.Contains(s, "msg=stopped") {
		t.Errorf("hostemu did not stop cleanly, as on SIGTERM:\n%s", s)
	}
	if _, err := http.Get(base + "/_emulator/health"); err == nil {
		t.Error("its port still answers after it stopped")
	}
}
