//go:build linux

package emulator_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// TestSoak holds thousands of idle connections, stalled headers, trickling and full-size
// uploads against one server on loopback while a normal client keeps working, and
// reports the normal client's latency and the server process's peak RSS. It runs only with
// HOSTEMU_SOAK=1, for HOSTEMU_SOAK_SECONDS (default 20), and stops by itself.
func TestSoak(t *testing.T) {
	if os.Getenv("HOSTEMU_SOAK") != "1" {
		t.Skip("set HOSTEMU_SOAK=1 to run the soak test")
	}
	secs := 20
	fmt.Sscan(os.Getenv("HOSTEMU_SOAK_SECONDS"), &secs)
	const (
		maxConns  = 2048
		idlers    = 3000 // more than the cap: they evict one another
		stallers  = 300  // half a header, then nothing
		tricklers = 200  // a 32 MiB upload at 8 KiB/s, below the minimum rate
		bigs      = 16   // 32 MiB uploads as fast as loopback goes, over and over
	)
	srv := startSoakServer(t, maxConns)
	addr := strings.TrimPrefix(srv.URL(), "http://")
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(secs)*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	var dials, idleClosed, uploads201, uploads503, uploadsCut atomic.Int64
	run := func(n int, fn func()) {
		for range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					fn()
				}
			})
		}
	}
	conn := func() net.Conn {
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil
		}
		dials.Add(1)
		context.AfterFunc(ctx, func() { c.Close() })
		return c
	}
	wait := func() { <-ctx.Done() }
	run(idlers, func() { // one request, then idle until the server closes it
		c := conn()
		if c == nil {
			wait()
			return
		}
		defer func() { c.Close(); pause(ctx, 100*time.Millisecond) }()
		io.WriteString(c, "GET /_emulator/health HTTP/1.1\r\nHost: x\r\n\r\n")
		r := bufio.NewReader(c)
		if res, err := http.ReadResponse(r, nil); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		if _, err := r.ReadByte(); err != nil && ctx.Err() == nil {
			idleClosed.Add(1)
		}
	})
	run(stallers, func() {
		c := conn()
		if c == nil {
			wait()
			return
		}
		defer c.Close()
		io.WriteString(c, "GET /v1/projects HTTP/1.1\r\nHost: x\r\n")
		c.Read(make([]byte, 1))
	})
	head := uploadHead(strings.Repeat("0", 64), 32<<20)
	run(tricklers, func() {
		c := conn()
		if c == nil {
			wait()
			return
		}
		defer c.Close()
		io.WriteString(c, head)
		chunk := make([]byte, 1024)
		tick := time.NewTicker(125 * time.Millisecond)
		defer tick.Stop()
		done := make(chan struct{})
		go func() { c.Read(make([]byte, 1)); close(done) }()
		for {
			select {
			case <-tick.C:
				if _, err := c.Write(chunk); err != nil {
					uploadsCut.Add(1)
					return
				}
			case <-done:
				uploadsCut.Add(1)
				return
			case <-ctx.Done():
				return
			}
		}
	})
	big := make([]byte, 32<<20)
	bigDigest := digest(big)
	bigClient := &http.Client{Transport: &http.Transport{}}
	run(bigs, func() {
		r, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/files", bytes.NewReader(big))
		r.Header.Set("Authorization", "Bearer t-deploy")
		r.Header.Set("X-File-Digest", bigDigest)
		res, err := bigClient.Do(r)
		if err != nil {
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		switch res.StatusCode {
		case 201:
			uploads201.Add(1)
		case 503:
			uploads503.Add(1)
		}
	})

	// the normal client: a keep-alive GET and a small POST, one after the other
	var lat []time.Duration
	failures := map[string]int{}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 15 * time.Second}
	for ctx.Err() == nil {
		for _, r := range []func() (*http.Request, error){
			func() (*http.Request, error) { return http.NewRequest("GET", srv.URL()+"/v1/projects?limit=5", nil) },
			func() (*http.Request, error) {
				r, err := http.NewRequest("POST", srv.URL()+"/_emulator/clock/advance", strings.NewReader(`{"by":"1s"}`))
				r.Header.Set("Content-Type", "application/json")
				return r, err
			},
		} {
			hr, _ := r()
			hr.Header.Set("Authorization", "Bearer t-read")
			start := time.Now()
			res, err := client.Do(hr)
			if err != nil {
				if ctx.Err() == nil {
					failures[err.Error()]++
				}
				continue
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				failures[res.Status]++
				continue
			}
			lat = append(lat, time.Since(start))
		}
	}
	cancel()
	wg.Wait()

	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	t.Logf("%d s: normal client %d requests ok, p50 %v, p99 %v, max %v; failures %v",
		secs, len(lat), pct(0.50), pct(0.99), pct(1), failures)
	t.Logf("attackers: %d dials, %d idle connections closed by the server (%s to make room at the cap of %d), uploads %d ok / %d refused 503 / %d trickling cut",
		dials.Load(), idleClosed.Load(), srv.evicted(), maxConns, uploads201.Load(), uploads503.Load(), uploadsCut.Load())
	t.Logf("peak RSS of the server process: %s", srv.peakRSS())
	failed := 0
	for _, n := range failures {
		failed += n
	}
	if failed*100 > len(lat) {
		t.Errorf("the normal client failed %d times in %d: %v", failed, failed+len(lat), failures)
	}
}

// pause waits d, pacing a client (an attacker that reconnects at once only burns the
// shared CPU), or less if ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// soakServer is the server under soak, in its own process so that its peak RSS is its
// own: this test binary, re-run as TestSoakServer.
type soakServer struct {
	cmd *exec.Cmd
	url string
	out *bufio.Reader
}

func (s *soakServer) URL() string { return s.url }

func startSoakServer(t *testing.T, maxConns int) *soakServer {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakServer$")
	cmd.Env = append(os.Environ(), "HOSTEMU_SOAK_SERVER="+fmt.Sprint(maxConns))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &soakServer{cmd: cmd, out: bufio.NewReader(stdout)}
	line, err := s.out.ReadString('\n')
	if err != nil {
		t.Fatalf("soak server: %v", err)
	}
	s.url = strings.TrimSpace(line)
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return s
}

func (s *soakServer) peakRSS() string {
	return vmHWM(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
}

func (s *soakServer) evicted() string {
	s.cmd.Process.Signal(syscall.SIGUSR1)
	line, _ := s.out.ReadString('\n')
	return strings.TrimSpace(line)
}

// TestSoakServer is the soak's server process: it prints its URL, prints how many idle
// connections it closed at the cap on SIGUSR1, and stops when its stdin closes.
func TestSoakServer(t *testing.T) {
	maxConns, err := strconv.Atoi(os.Getenv("HOSTEMU_SOAK_SERVER"))
	if err != nil {
		t.Skip("run by TestSoak")
	}
	srv, err := emulator.Listen(emulator.Options{
		Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, RateLimitsOff: true,
		Limits: emulator.Limits{MaxConnections: maxConns, BodyReadTimeout: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	fmt.Println(srv.URL())
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			fmt.Println(emulator.Evicted(srv))
		}
	}()
	io.Copy(io.Discard, os.Stdin)
}

func vmHWM(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
