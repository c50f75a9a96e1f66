package perf_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBinaryVsGin measures the speed bar as users run hostemu: the built binary (real
// clock, rate limits counted, journal on, every default feature) serving
// GET /v1/deployments/{id}, against the baregin binary serving the same bytes. Each
// server is pinned to CPU 0 and wrk to CPU 1; rounds alternate between the two so both
// see the same machine. It reports requests per second, their ratio, and the server's
// CPU time per request (from /proc); it asserts nothing about speed.
//
// HOSTEMU_PERF_BEFORE names another hostemu binary (built as build builds, from
// another tree: the code before a change) served beside them in every round, in turn
// with the others, so that a change is measured in the same minutes as the reference:
// it adds that binary's figures and its CPU per request against this one's, round by
// round.
func TestBinaryVsGin(t *testing.T) {
	wrk, taskset := tools(t, "build both binaries and compare them with wrk (about a minute)")
	rounds := envInt("HOSTEMU_PERF_ROUNDS", 7)
	dir := t.TempDir()
	build(t, filepath.Join(dir, "hostemu"), "../../../cmd/hostemu")
	build(t, filepath.Join(dir, "baregin"), "./baregin")

	emuArgs := []string{"--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text"}
	emuAddr := freeAddr(t)
	emu := start(t, taskset, filepath.Join(dir, "hostemu"), append([]string{"--addr", emuAddr}, emuArgs...)...)
	path := "/v1/deployments/" + firstDeployment(t, "http://"+emuAddr)
	var before *exec.Cmd
	beforeAddr := freeAddr(t)
	if bin := os.Getenv("HOSTEMU_PERF_BEFORE"); bin != "" {
		before = start(t, taskset, bin, append([]string{"--addr", beforeAddr}, emuArgs...)...)
	}
	body := get(t, "http://"+emuAddr+path)
	bodyFile := filepath.Join(dir, "body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		t.Fatal(err)
	}
	ginAddr := freeAddr(t)
	bare := start(t, taskset, filepath.Join(dir, "baregin"), "-addr", ginAddr, "-body", bodyFile)
	if got := get(t, "http://"+ginAddr+path); string(got) != string(body) {
		t.Fatalf("baregin answers other bytes than hostemu")
	}

	// HOSTEMU_PERF_GIN_HEADERS: a second reference, bare gin writing the same header
	// keys as hostemu's answer (the spec's X-Ratelimit-* and Vary, as constants): what
	// the bar would read if the reference wrote the answer's whole head, not its body
	// alone. Informative; the row is against bare gin as it is.
	var ginH *exec.Cmd
	var ginHAddr string
	if os.Getenv("HOSTEMU_PERF_GIN_HEADERS") != "" {
		ginHAddr = freeAddr(t)
		args := []string{"-addr", ginHAddr, "-body", bodyFile}
		for name, vals := range answerHead(t, "http://"+emuAddr+path) {
			switch name {
			case "Date", "Content-Length", "Content-Type": // net/http's or gin's own on both sides
			default:
				for _, v := range vals {
					args = append(args, "-header", name+": "+v)
				}
			}
		}
		ginH = start(t, taskset, filepath.Join(dir, "baregin"), args...)
		t.Logf("bare gin with hostemu's headers: %q", args[4:])
	}

	run := func(p *exec.Cmd, addr string) (rps, cpuMicros float64) {
		return loadRate(t, p, wrk, taskset, 3, "http://"+addr+path, "GET", "", "", "Authorization: Bearer hostemu-read")
	}
	var ratios, cpuRatios, beforeRatios, beforeCPURatios, changeCPU, headRatios, headCPURatios []float64
	for i := range rounds {
		var e, ec, g, gc, b, bc float64
		sides := []func(){
			func() { e, ec = run(emu, emuAddr) },
			func() { g, gc = run(bare, ginAddr) },
		}
		if before != nil {
			sides = append(sides, func() { b, bc = run(before, beforeAddr) })
		}
		var gh, ghc float64
		if ginH != nil {
			sides = append(sides, func() { gh, ghc = run(ginH, ginHAddr) })
		}
		for j := range sides { // each side first in turn
			sides[(i+j)%len(sides)]()
		}
		ratios, cpuRatios = append(ratios, e/g), append(cpuRatios, ec/gc)
		t.Logf("round %d: hostemu %.0f req/s (%.1f µs CPU/req), bare gin %.0f req/s (%.1f µs CPU/req): %.2f of gin, %.2f× its CPU | load %s", i+1, e, ec, g, gc, e/g, ec/gc, loadAvg())
		if before != nil {
			beforeRatios, beforeCPURatios, changeCPU = append(beforeRatios, b/g), append(beforeCPURatios, bc/gc), append(changeCPU, ec/bc)
			t.Logf("round %d: before %.0f req/s (%.1f µs CPU/req): %.2f of gin, %.2f× its CPU; hostemu's CPU per request %.2f× before's", i+1, b, bc, b/g, bc/gc, ec/bc)
		}
		if ginH != nil {
			headRatios, headCPURatios = append(headRatios, e/gh), append(headCPURatios, ec/ghc)
			t.Logf("round %d: bare gin with hostemu's headers %.0f req/s (%.1f µs CPU/req): hostemu %.2f of it, %.2f× its CPU", i+1, gh, ghc, e/gh, ec/ghc)
		}
	}
	mid := func(xs []float64) (med, lo, hi float64) { return median(xs), slices.Min(xs), slices.Max(xs) }
	m, lo, hi := mid(ratios)
	c, clo, chi := mid(cpuRatios)
	t.Logf("median over %d rounds: %.2f of bare gin (min %.2f, max %.2f); CPU per request %.2f× gin's (%.2f–%.2f)", rounds, m, lo, hi, c, clo, chi)
	if before != nil {
		m, lo, hi = mid(beforeRatios)
		c, clo, chi = mid(beforeCPURatios)
		d, dlo, dhi := mid(changeCPU)
		t.Logf("before, the same rounds: %.2f of bare gin (min %.2f, max %.2f); CPU per request %.2f× gin's (%.2f–%.2f); hostemu's CPU per request %.2f× before's (%.2f–%.2f)", m, lo, hi, c, clo, chi, d, dlo, dhi)
	}
	if ginH != nil {
		m, lo, hi = mid(headRatios)
		c, clo, chi = mid(headCPURatios)
		t.Logf("against bare gin with hostemu's headers, the same rounds: %.2f of its rate (min %.2f, max %.2f); CPU per request %.2f× its (%.2f–%.2f)", m, lo, hi, c, clo, chi)
	}
}

// answerHead is the header of hostemu's answer to a GET of url with the read token.
func answerHead(t *testing.T, url string) http.Header {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer hostemu-read")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	return res.Header
}

// tools skips the test unless HOSTEMU_PERF is set and taskset is on the PATH of a Linux
// machine (CPU time is read from /proc), and finds wrk; where wrk is not installed, the
// load comes from loadgen (package loadgen, built here), which prints what is read of
// wrk's output.
func tools(t *testing.T, what string) (wrk, taskset string) {
	t.Helper()
	needPerf(t, what)
	if runtime.GOOS != "linux" {
		t.Skip("CPU time is read from /proc")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset is not installed")
	}
	if wrk, err = exec.LookPath("wrk"); err != nil {
		wrk = filepath.Join(t.TempDir(), "loadgen")
		build(t, wrk, "./loadgen")
	}
	return wrk, taskset
}

// needPerf skips the test unless HOSTEMU_PERF is set, saying what it would do.
func needPerf(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("HOSTEMU_PERF") == "" {
		t.Skip("set HOSTEMU_PERF=1 to " + what)
	}
}

// load runs wrk (or loadgen), pinned to CPU 1, against url for d with the read token:
// one thread, 16 connections. It fails the test on any answer but 2xx.
func load(t *testing.T, wrk, taskset, url, d string) []byte {
	t.Helper()
	return loadReq(t, wrk, taskset, url, d, 0, "GET", "", "", "Authorization: Bearer hostemu-read")
}

// loadReq is load with a method, a body file (POST), a Host header and a count of
// requests n (0: as many as d allows; loadgen -n, d then the longest it may take),
// which only loadgen takes: with wrk, only GETs of the URL's host for d.
func loadReq(t *testing.T, wrk, taskset, url, d string, n int, method, bodyFile, host string, headers ...string) []byte {
	t.Helper()
	var args []string
	if filepath.Base(wrk) == "loadgen" {
		args = []string{"-c", "16", "-d", d, "-n", strconv.Itoa(n), "-method", method, "-body", bodyFile, "-host", host}
		for _, h := range headers {
			args = append(args, "-H", h)
		}
	} else {
		if method != "GET" || host != "" || n != 0 {
			t.Skip("wrk here sends only GETs: uninstall it to use loadgen")
		}
		args = []string{"-t1", "-c16", "-d" + d}
		for _, h := range headers {
			args = append(args, "-H", h)
		}
	}
	out, err := exec.Command(taskset, append(append([]string{"-c", "1", wrk}, args...), url)...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "Non-2xx") {
		t.Fatalf("%s: %v\n%s", filepath.Base(wrk), err, out)
	}
	return out
}

var reqsPerSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// loadRate runs loadReq against the server p for secs seconds and returns its requests
// per second and its CPU time per request, in µs.
func loadRate(t *testing.T, p *exec.Cmd, wrk, taskset string, secs int, url, method, bodyFile, host string, headers ...string) (rps, cpuMicros float64) {
	t.Helper()
	before := cpuTime(t, p.Process.Pid)
	out := loadReq(t, wrk, taskset, url, strconv.Itoa(secs)+"s", 0, method, bodyFile, host, headers...)
	m := reqsPerSec.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s printed no Requests/sec:\n%s", filepath.Base(wrk), out)
	}
	rps, _ = strconv.ParseFloat(string(m[1]), 64)
	return rps, (cpuTime(t, p.Process.Pid) - before).Seconds() * 1e6 / (rps * float64(secs))
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	// as cmd/hostemu/binaries.sh builds what users run (the reference alike)
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "nomsgpack", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// freeAddr is a loopback address nobody listens on now (the binaries take an address,
// not a listener).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs a binary pinned to CPU 0 and waits until its address answers.
func start(t *testing.T, taskset, bin string, args ...string) *exec.Cmd {
	t.Helper()
	return startWith(t, taskset, "", false, bin, args...)
}

// get is a GET with the read token that must answer 200.
func get(t *testing.T, url string) []byte {
	t.Helper()
	return do(t, "GET", url, "", "Bearer hostemu-read", nil, 200)
}

var firstID = regexp.MustCompile(`"id":"(dpl_[A-Za-z0-9]+)"`)

func firstDeployment(t *testing.T, base string) string {
	t.Helper()
	m := firstID.FindSubmatch(get(t, base+"/v1/deployments?limit=1"))
	if m == nil {
		t.Fatal("no deployment in the default fixtures")
	}
	return string(m[1])
}

// cpuTime is the user and system CPU time of a process so far.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	user, sys, _ := procStat(t, pid)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(user+sys) * time.Second / ticks
}
