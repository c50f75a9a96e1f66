package perf_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
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
// GET /v1/deployments/{id}, against references served by the baregin binary. Each
// server is pinned to CPU 0 and the load (wrk, or loadgen) to CPU 1. It reports
// requests per second, their ratio, and each server's CPU time per request (the
// scheduler's count of its threads, /proc/PID/task/*/schedstat); it asserts nothing
// about speed.
//
// The references, each a baregin process of its own:
//
//   - "the reference" (issue #38's rule: a bare handler doing the same necessary work,
//     the same bytes in and out): bare gin answering the same bytes with the same head
//     (the spec's X-RateLimit-* headers, documented on every answer, and Vary, as
//     constants: -header) after finding the id among the world's deployment ids in a
//     map (-ids), as hostemu must find the deployment. The row's figure.
//   - "bare gin": the same bytes, no head beyond gin's, no lookup: printed beside it,
//     so nothing is hidden.
//   - HOSTEMU_PERF_GIN_HEADERS=1 adds bare gin with the head but no lookup.
//
// A second process of the same hostemu binary, "the twin", runs as a side of its own:
// its figures against hostemu's are the harness's A/A spread, printed beside the
// figure (identical code; what the machine alone moves).
//
// The machine's speed drifts by up to 30 % between 3-second windows (docs/performance.md,
// "The GET chain, fourth pass"), so a round gives each side one short window
// (HOSTEMU_PERF_WINDOW, 1s), the sides in turn, the order rotated every round and
// reversed every other round, so that no side always follows the same one; and many
// rounds (HOSTEMU_PERF_ROUNDS, 15). Each figure is the median of the rounds' ratios,
// with their spread, and the ratio of all rounds' CPU per request.
//
// HOSTEMU_PERF_BEFORE names another hostemu binary (built as build builds, from
// another tree: the code before a change) served beside them in every round, in turn
// with the others, so that a change is measured in the same minutes as the reference:
// it adds that binary's figures and its CPU per request against this one's, round by
// round.
func TestBinaryVsGin(t *testing.T) {
	wrk, taskset := tools(t, "build both binaries and compare them with wrk (about two minutes)")
	rounds := envInt("HOSTEMU_PERF_ROUNDS", 15)
	window := time.Second
	if w := os.Getenv("HOSTEMU_PERF_WINDOW"); w != "" {
		var err error
		if window, err = time.ParseDuration(w); err != nil || window < 100*time.Millisecond {
			t.Fatalf("HOSTEMU_PERF_WINDOW=%q: want a duration of 100ms or more", w)
		}
	}
	dir := t.TempDir()
	build(t, filepath.Join(dir, "hostemu"), "../../../cmd/hostemu")
	build(t, filepath.Join(dir, "baregin"), "./baregin")

	type side struct {
		name       string
		p          *exec.Cmd
		addr       string
		reqs, nsec []float64 // each round's requests and CPU ns
	}
	emuArgs := []string{"--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text"}
	hostemu := func(name, bin string) *side {
		s := &side{name: name, addr: freeAddr(t)}
		s.p = start(t, taskset, bin, append([]string{"--addr", s.addr}, emuArgs...)...)
		return s
	}
	emu := hostemu("hostemu", filepath.Join(dir, "hostemu"))
	twin := hostemu("twin", filepath.Join(dir, "hostemu"))
	var before *side
	if bin := os.Getenv("HOSTEMU_PERF_BEFORE"); bin != "" {
		before = hostemu("before", bin)
	}
	path, refArgs := sameWork(t, "http://"+emu.addr, dir)
	body := get(t, "http://"+emu.addr+path)
	bodyFile := filepath.Join(dir, "body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		t.Fatal(err)
	}
	reference := func(name string, args ...string) *side {
		s := &side{name: name, addr: freeAddr(t)}
		s.p = start(t, taskset, filepath.Join(dir, "baregin"), append([]string{"-addr", s.addr, "-body", bodyFile}, args...)...)
		res := do(t, "GET", "http://"+s.addr+path, "", "Bearer hostemu-read", nil, 200)
		if string(res) != string(body) {
			t.Fatalf("%s answers other bytes than hostemu", name)
		}
		return s
	}
	ref := reference("reference", refArgs...)
	do(t, "GET", "http://"+ref.addr+"/v1/deployments/dpl_none", "", "Bearer hostemu-read", nil, 404)
	bare := reference("bare gin")
	t.Logf("the reference: %q", refArgs)
	sides := []*side{emu, twin, ref, bare}
	if before != nil {
		sides = append(sides, before)
	}
	var ginH *side
	if os.Getenv("HOSTEMU_PERF_GIN_HEADERS") != "" {
		ginH = reference("gin with the head", refArgs[2:]...) // the head without -ids
		sides = append(sides, ginH)
	}

	url := func(s *side) string { return "http://" + s.addr + path }
	for _, s := range sides { // a warm-up window each, not counted
		loadReq(t, wrk, taskset, url(s), window.String(), 0, "GET", "", "", "Authorization: Bearer hostemu-read")
	}
	for i := range rounds {
		order := make([]*side, len(sides))
		for j := range sides {
			order[j] = sides[(i+j)%len(sides)]
		}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			n0 := runNanos(t, s.p.Process.Pid)
			out := loadReq(t, wrk, taskset, url(s), window.String(), 0, "GET", "", "", "Authorization: Bearer hostemu-read")
			ns := float64(runNanos(t, s.p.Process.Pid) - n0)
			m := reqsPerSec.FindSubmatch(out)
			if m == nil {
				t.Fatalf("%s printed no Requests/sec:\n%s", filepath.Base(wrk), out)
			}
			rps, _ := strconv.ParseFloat(string(m[1]), 64)
			s.reqs, s.nsec = append(s.reqs, rps*window.Seconds()), append(s.nsec, ns)
		}
		line := fmt.Sprintf("round %d:", i+1)
		for _, s := range sides {
			line += fmt.Sprintf(" %s %.0f/s %.2f µs;", s.name, s.reqs[i]/window.Seconds(), s.nsec[i]/s.reqs[i]/1e3)
		}
		t.Logf("%s load %s", line, loadAvg())
	}
	// against: a's rate over b's and a's CPU per request over b's, round by round, and
	// over all rounds
	against := func(a, b *side) string {
		var rate, cpu []float64
		for i := range rounds {
			rate = append(rate, a.reqs[i]/b.reqs[i])
			cpu = append(cpu, (a.nsec[i]/a.reqs[i])/(b.nsec[i]/b.reqs[i]))
		}
		all := (total(a.nsec) / total(a.reqs)) / (total(b.nsec) / total(b.reqs))
		return fmt.Sprintf("%.2f of its rate (rounds %.2f–%.2f), %.2f× its CPU per request (rounds %.2f–%.2f; all rounds %.2f×)",
			median(rate), slices.Min(rate), slices.Max(rate), median(cpu), slices.Min(cpu), slices.Max(cpu), all)
	}
	cpuOf := func(s *side) string {
		var c []float64
		for i := range rounds {
			c = append(c, s.nsec[i]/s.reqs[i]/1e3)
		}
		return fmt.Sprintf("%.2f µs a request (%.2f–%.2f)", median(c), slices.Min(c), slices.Max(c))
	}
	t.Logf("%d rounds of %s a side, load %s:", rounds, window, loadAvg())
	for _, s := range sides {
		t.Logf("  %-18s %s", s.name, cpuOf(s))
	}
	t.Logf("hostemu against the reference (same bytes, same head, the id found in a map): %s", against(emu, ref))
	t.Logf("hostemu against bare gin (fixed bytes, gin's head):                          %s", against(emu, bare))
	t.Logf("A/A, the twin (the same binary) against hostemu:                             %s", against(twin, emu))
	t.Logf("the twin against the reference:                                              %s", against(twin, ref))
	if before != nil {
		t.Logf("before against the reference:                                                %s", against(before, ref))
		t.Logf("before against bare gin:                                                     %s", against(before, bare))
		t.Logf("hostemu against before:                                                      %s", against(emu, before))
	}
	if ginH != nil {
		t.Logf("hostemu against gin with the head (no lookup):                               %s", against(emu, ginH))
	}
}

// sameWork is the GET the GET rows measure (the first deployment of the world served at
// base) and baregin's flags for the reference doing the same work as hostemu's answer
// to it (issue #38's rule): -ids, a file in dir of the world's deployment ids, which it
// finds each GET's id among, and one -header for each header of hostemu's answer head
// but net/http's or gin's own (Date, Content-Length, Content-Type), which both sides
// write. The -ids pair comes first.
func sameWork(t *testing.T, base, dir string) (path string, args []string) {
	t.Helper()
	ids := deploymentIDs(t, base)
	idsFile := filepath.Join(dir, "ids")
	if err := os.WriteFile(idsFile, []byte(strings.Join(ids, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	path = "/v1/deployments/" + ids[0]
	args = []string{"-ids", idsFile}
	for name, vals := range answerHead(t, base+path) {
		switch name {
		case "Date", "Content-Length", "Content-Type": // net/http's or gin's own on both sides
		default:
			for _, v := range vals {
				args = append(args, "-header", name+": "+v)
			}
		}
	}
	return path, args
}

// deploymentIDs are the ids of every deployment of the world served at base, newest
// first, paged through GET /v1/deployments.
func deploymentIDs(t *testing.T, base string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		u := base + "/v1/deployments?limit=100"
		if cursor != "" {
			u += "&cursor=" + neturl.QueryEscape(cursor)
		}
		var page struct {
			Deployments []struct{ ID string }
			NextCursor  *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(get(t, u), &page); err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Deployments {
			ids = append(ids, d.ID)
		}
		if page.NextCursor == nil || len(page.Deployments) == 0 {
			break
		}
		cursor = *page.NextCursor
	}
	if len(ids) == 0 {
		t.Fatal("no deployment in the default fixtures")
	}
	return ids
}

func total(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
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
