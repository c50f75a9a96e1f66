package perf_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// createRounds is TestBinaryHotPaths' measure of POST /v1/deployments without --state,
// made steady enough to tell a 5 % change apart. Measured on the same tree, the timed
// rounds of the other paths read creates anywhere from 0.67 to 0.89 of the reference:
// both worlds grew by every create of every round (to 250,000–300,000 deployments, a
// live heap of hundreds of MB for hostemu), so a collection came every 2–3 s of
// creates, and a 2 s round held one of those few, large collections or none — a swing
// of a sixth of the round's CPU, on one side and not the other; and the reference,
// faster, grew its world faster than hostemu's, so the two sides did not even measure
// the same world. Here:
//
//   - each side runs in its own pair of fresh processes (nothing of the other paths'
//     rounds on its heap);
//   - every round, on both sides, starts from the start-up world (hostemu's POST
//     /_emulator/reset, the reference's POST /_reset, the create's file uploaded again)
//     and sends the same number of creates (loadgen -n, HOSTEMU_PERF_CREATES, 40,000):
//     both sides run the same world size through each round, and each round starts in
//     the state the round before it started in, so the collections fall at the same
//     points of every round, several of them a round, over a heap of tens of MB;
//   - a warm-up round on each side, then rounds alternated (A B, B A, …) as elsewhere;
//   - the ratio is read per round, from the two sides of that round: the median and
//     the spread (min–max) of those ratios, beside each side's CPU per create.
//
// A round's figures are those of the other paths: its CPU is the process's from before
// its first create to when it is quiet again after its last (hostemu's lifecycles, 6 s,
// waited out and charged to it), its rate the creates over the round's time plus the
// CPU spent after it. HOSTEMU_PERF_CREATE_WORLD=grow leaves out the resets (the world
// grows by every round, as before: the same count of creates a round), to show what
// they change, and HOSTEMU_PERF_CREATE_WORLD=timed measures creates as the other paths
// are measured (the harness before this one). HOSTEMU_PERF_BEFORE names another hostemu
// binary (the code before a change, built as build builds) run as a third side in the
// same rounds, each side first in turn. HOSTEMU_PERF_GCTRACE=1 runs the servers with
// GODEBUG=gctrace=1 and prints each round's collections and their CPU.
func createRounds(t *testing.T, wrk, taskset, dir, bodyFile, createFile string, site []byte, rounds int) {
	t.Helper()
	if filepath.Base(wrk) != "loadgen" {
		t.Skip("the creates need loadgen")
	}
	n := envInt("HOSTEMU_PERF_CREATES", 40000)
	grow := os.Getenv("HOSTEMU_PERF_CREATE_WORLD") == "grow"
	traced := os.Getenv("HOSTEMU_PERF_GCTRACE") != ""
	type side struct {
		name        string
		p           *exec.Cmd
		addr        string
		reset       func()
		stderr      string
		traceOffset int64
		lifecycles  bool
	}
	emuAddr, bareAddr := freeAddr(t), freeAddr(t)
	upload := func(addr string) {
		do(t, "POST", "http://"+addr+"/v1/files", "", "Bearer hostemu-deploy", site, 201, "X-File-Digest", sum(site), "Content-Type", "application/octet-stream")
	}
	emu := &side{name: "hostemu", addr: emuAddr, stderr: filepath.Join(dir, "create-hostemu.stderr"), lifecycles: true}
	emu.p = startWith(t, taskset, emu.stderr, traced, filepath.Join(dir, "hostemu"), "--addr", emuAddr, "--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text", "--max-world-bytes", "2GiB")
	emu.reset = func() {
		do(t, "POST", "http://"+emuAddr+"/_emulator/reset", "", "", nil, 200)
		upload(emuAddr)
	}
	bare := &side{name: "bare", addr: bareAddr, stderr: filepath.Join(dir, "create-bare.stderr")}
	bare.p = startWith(t, taskset, bare.stderr, traced, filepath.Join(dir, "baregin"), "-addr", bareAddr, "-body", bodyFile)
	bare.reset = func() {
		do(t, "POST", "http://"+bareAddr+"/_reset", "", "Bearer hostemu-deploy", nil, 200)
		upload(bareAddr)
	}
	var before *side // HOSTEMU_PERF_BEFORE: another hostemu binary (the code before a change) in the same rounds
	if bin := os.Getenv("HOSTEMU_PERF_BEFORE"); bin != "" {
		addr := freeAddr(t)
		before = &side{name: "before", addr: addr, stderr: filepath.Join(dir, "create-before.stderr"), lifecycles: true}
		before.p = startWith(t, taskset, before.stderr, traced, bin, "--addr", addr, "--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text", "--max-world-bytes", "2GiB")
		before.reset = func() {
			do(t, "POST", "http://"+addr+"/_emulator/reset", "", "", nil, 200)
			upload(addr)
		}
		before.reset()
	}
	emu.reset()
	bare.reset()

	type figures struct {
		creates, secs, rate, cpu, gcs, gcMillis, goalMB float64
	}
	run := func(s *side) figures {
		if !grow {
			s.reset()
		}
		quiet(t, s.p.Process.Pid)
		before := cpuTime(t, s.p.Process.Pid)
		out, err := exec.Command(taskset, "-c", "1", wrk, "-c", "16", "-n", strconv.Itoa(n), "-d", "120s", "-method", "POST", "-body", createFile,
			"-H", "Authorization: Bearer hostemu-deploy", "-H", "Content-Type: application/json", "http://"+s.addr+"/v1/deployments").CombinedOutput()
		if err != nil || strings.Contains(string(out), "Non-2xx") {
			t.Fatalf("loadgen: %v\n%s", err, out)
		}
		inRound := cpuTime(t, s.p.Process.Pid)
		var f figures
		f.creates, f.secs = loadgenField(t, out, "Requests"), loadgenField(t, out, "Seconds")
		if f.creates != float64(n) {
			t.Fatalf("loadgen sent %v creates, not %d:\n%s", f.creates, n, out)
		}
		if s.lifecycles {
			// the lifecycles' last steps come 6 s after their creates (queued 1 s,
			// building 5 s): waited out, so that they are this round's work
			time.Sleep(6 * time.Second)
		}
		quiet(t, s.p.Process.Pid)
		end := cpuTime(t, s.p.Process.Pid)
		f.cpu = (end - before).Seconds() * 1e6 / f.creates
		f.rate = f.creates / (f.secs + (end - inRound).Seconds())
		if traced {
			f.gcs, f.gcMillis, f.goalMB = gcTrace(t, s.stderr, &s.traceOffset)
		}
		return f
	}
	t.Logf("POST /v1/deployments: %d creates a round on each side, every round from the start-up world (%s) | load %s", n, map[bool]string{true: "no reset: the worlds grow", false: "reset before each"}[grow], loadAvg())
	sides := []*side{emu, bare}
	if before != nil {
		sides = append(sides, before)
	}
	for _, s := range sides { // warm-up, not counted
		run(s)
	}
	var ratios, cpuRatios, emuCPU, bareCPU, beforeRatios, beforeCPU, changeCPU []float64
	var total [2]struct{ creates, secs, cpu float64 }
	for r := range rounds {
		var e, b, o figures
		for j := range sides { // each side first in turn; with two, A B then B A
			k := (r + j) % len(sides)
			if len(sides) == 2 && r%2 == 1 {
				k = 1 - j
			}
			switch f := run(sides[k]); sides[k] {
			case emu:
				e = f
			case bare:
				b = f
			default:
				o = f
			}
		}
		ratios, cpuRatios = append(ratios, e.rate/b.rate), append(cpuRatios, e.cpu/b.cpu)
		emuCPU, bareCPU = append(emuCPU, e.cpu), append(bareCPU, b.cpu)
		for i, f := range []figures{e, b} {
			total[i].creates += f.creates
			total[i].secs += f.creates / f.rate
			total[i].cpu += f.cpu * f.creates
		}
		gc := ""
		if traced {
			gc = fmt.Sprintf(" | collections: hostemu %.0f (%.0f ms CPU, goal %.0f MB), bare %.0f (%.0f ms, %.0f MB)", e.gcs, e.gcMillis, e.goalMB, b.gcs, b.gcMillis, b.goalMB)
		}
		t.Logf("  round %d: hostemu %7.0f creates/s %5.1f µs CPU | bare %7.0f creates/s %5.1f µs CPU | %.3f, %.3f×%s | load %s",
			r, e.rate, e.cpu, b.rate, b.cpu, e.rate/b.rate, e.cpu/b.cpu, gc, loadAvg())
		if before != nil {
			beforeRatios, beforeCPU, changeCPU = append(beforeRatios, o.rate/b.rate), append(beforeCPU, o.cpu), append(changeCPU, e.cpu/o.cpu)
			t.Logf("  round %d: before  %7.0f creates/s %5.1f µs CPU: %.3f of bare, %.3f× its CPU; hostemu's CPU per create %.3f× before's", r, o.rate, o.cpu, o.rate/b.rate, o.cpu/b.cpu, e.cpu/o.cpu)
		}
	}
	lohi := func(xs []float64) string { return fmt.Sprintf("%.3f–%.3f", slices.Min(xs), slices.Max(xs)) }
	t.Logf("%-30s %.3f of bare's rate (%s, spread %.3f), %.3f× its CPU per create (%s); CPU per create hostemu %.1f µs (%.1f–%.1f), bare %.1f µs (%.1f–%.1f) | load %s",
		"POST /v1/deployments", median(ratios), lohi(ratios), slices.Max(ratios)-slices.Min(ratios), median(cpuRatios), lohi(cpuRatios),
		median(emuCPU), slices.Min(emuCPU), slices.Max(emuCPU), median(bareCPU), slices.Min(bareCPU), slices.Max(bareCPU), loadAvg())
	t.Logf("%-30s all rounds: %.3f of bare's rate, %.3f× its CPU per create", "",
		(total[0].creates/total[0].secs)/(total[1].creates/total[1].secs), (total[0].cpu/total[0].creates)/(total[1].cpu/total[1].creates))
	if before != nil {
		t.Logf("%-30s before, the same rounds: %.3f of bare's rate (%s), CPU per create %.1f µs (%.1f–%.1f); hostemu's CPU per create %.3f× before's (%s)", "",
			median(beforeRatios), lohi(beforeRatios), median(beforeCPU), slices.Min(beforeCPU), slices.Max(beforeCPU), median(changeCPU), lohi(changeCPU))
	}
}

// loadgenField is the number loadgen printed after "name: ".
func loadgenField(t *testing.T, out []byte, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("loadgen printed no %s:\n%s", name, out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// startWith is start writing the server's stderr to a file, and with GODEBUG=gctrace=1
// when traced (the runtime's line for each collection).
func startWith(t *testing.T, taskset, stderr string, traced bool, bin string, args ...string) *exec.Cmd {
	t.Helper()
	f, err := os.Create(stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p := dieWithTest(exec.Command(taskset, append([]string{"-c", "0", bin}, args...)...))
	p.Stderr = f
	if traced {
		p.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Process.Kill(); p.Wait() })
	addr := args[slices.IndexFunc(args, func(s string) bool { return s == "--addr" || s == "-addr" })+1]
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s", bin, addr)
		}
		time.Sleep(10 * time.Millisecond) // a child process has no other way to say it listens
	}
}

// gcTraceLine is the runtime's gctrace line: its CPU times (assist, background,
// idle and the two pauses, ms) and the heap goal.
var gcTraceLine = regexp.MustCompile(`(?m)^gc \d+ @[0-9.]+s \d+%: [0-9.+]+ ms clock, ([0-9.+/]+) ms cpu, [0-9]+->[0-9]+->[0-9]+ MB, ([0-9]+) MB goal`)

// gcTrace reads the collections a server's stderr reports past *offset: how many, their
// CPU in ms, and the last one's heap goal; it moves *offset past them.
func gcTrace(t *testing.T, path string, offset *int64) (n, millis, goalMB float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(*offset, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	*offset += int64(len(b))
	for _, m := range gcTraceLine.FindAllSubmatch(b, -1) {
		n++
		for _, x := range strings.FieldsFunc(string(m[1]), func(r rune) bool { return r == '+' || r == '/' }) {
			v, _ := strconv.ParseFloat(x, 64)
			millis += v
		}
		goalMB, _ = strconv.ParseFloat(string(m[2]), 64)
	}
	return n, millis, goalMB
}
