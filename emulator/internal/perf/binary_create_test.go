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
// made steady enough to tell a 5 % change apart (docs/performance.md, "Creates, fifth
// pass"). The timed rounds the other paths use read creates anywhere from 0.67 to 0.89
// of the reference on one tree, for two reasons, the second the larger:
//
//   - the worlds grew by every create (to 250,000–300,000 deployments), so a round
//     held one or two of a few large collections or none (GODEBUG=gctrace: 1–3 a
//     round, 0.16–0.92 s of CPU each round, the ratio of one run's rounds 0.53–0.85);
//     and the two sides grew different worlds, the reference's faster;
//   - this machine's speed drifts: the same binary's CPU per create moves between 28
//     and 55 µs from one 2 s round to the next, the collections steady, no time
//     stolen. Two sides measured 10 s apart are not measured on the same machine (two
//     identical binaries in rounds side by side: 0.67–1.44× each other).
//
// So here:
//
//   - the sides run in their own fresh processes;
//   - every round starts each side from its start-up world (hostemu's POST
//     /_emulator/reset, the reference's POST /_reset, the create's file uploaded
//     again), and each side sends the same number of creates (HOSTEMU_PERF_CREATES,
//     40,000): the same world sizes on both sides, and the same collections in every
//     round (5–7 for hostemu, 80–140 ms of CPU a round; 145–218 ms in other runs);
//   - a round's creates go in slices (HOSTEMU_PERF_CREATE_SLICES, 10; loadgen -n),
//     alternated between the sides in every order in turn (A B, B A; with three sides
//     all six orders: a side that always followed the same other one read 4 % less
//     CPU than its identical twin), so that both sides see the same machine within
//     a fraction of a second. The count of slices is rounded up to a multiple of the
//     count of orders (12 with three sides), so that every round holds each order as
//     often;
//   - after the last slice the lifecycles are waited out (6 s) and every side is
//     quiet again; a side's figure is its process's CPU over the whole round (user and
//     system, from /proc) over its creates. hostemu's lifecycle steps and collections
//     run during the other side's slices too, on its own CPU time; what the CPU time
//     does not hold is what that work costs the other side in caches, TLB and switches
//     (HOSTEMU_PERF_CREATE_TWIN measures it). "Of bare's rate by CPU" is the
//     reference's CPU per create over hostemu's: the rate each sustains on its one core
//     (both serve at 100 % of it while loaded), the figure the other paths read as
//     "all rounds". The slices' wall rates are printed too; they flatter hostemu, whose
//     leftover work slows the reference's slices;
//   - a warm-up round, then HOSTEMU_PERF_ROUNDS rounds; the median and the spread of
//     the rounds' ratios, and each side's CPU per create.
//
// HOSTEMU_PERF_CREATE_WORLD=grow leaves out the resets (the worlds grow by every
// round), and HOSTEMU_PERF_CREATE_WORLD=timed measures creates as the other paths are
// measured (the harness before this one). HOSTEMU_PERF_BEFORE names another hostemu
// binary (the code before a change, built as build builds) run as a third side in the
// same slices: its ratio, and hostemu's CPU per create over its, round by round.
// HOSTEMU_PERF_CREATE_TWIN=bare runs a second reference as the third side instead (the
// same baregin, a process of its own, in the same slices) and reads each slice's CPU
// of the two references (the scheduler's count, in ns): the reference's CPU per
// create in the slices that came right after hostemu's against those that came right
// after its twin's, in the same seconds — what hostemu's left-behind work costs the
// reference beyond hostemu's own CPU time, where it lands next to it.
// HOSTEMU_PERF_GCTRACE=1 runs the servers with GODEBUG=gctrace=1 and prints each
// round's collections and their CPU, the user and system split and the page faults.
func createRounds(t *testing.T, wrk, taskset, dir, bodyFile, createFile string, site []byte, rounds int) {
	t.Helper()
	n := envInt("HOSTEMU_PERF_CREATES", 40000)
	parts := envInt("HOSTEMU_PERF_CREATE_SLICES", 10)
	grow := os.Getenv("HOSTEMU_PERF_CREATE_WORLD") == "grow"
	traced := os.Getenv("HOSTEMU_PERF_GCTRACE") != ""
	twin := os.Getenv("HOSTEMU_PERF_CREATE_TWIN")
	if twin != "" && twin != "bare" {
		t.Fatalf("HOSTEMU_PERF_CREATE_TWIN=%q: the one twin is bare", twin)
	}
	if twin != "" && os.Getenv("HOSTEMU_PERF_BEFORE") != "" {
		t.Fatal("HOSTEMU_PERF_CREATE_TWIN and HOSTEMU_PERF_BEFORE: one third side at a time")
	}
	type side struct {
		name        string
		p           *exec.Cmd
		addr        string
		reset       func()
		stderr      string
		traceOffset int64
	}
	upload := func(addr string) {
		do(t, "POST", "http://"+addr+"/v1/files", "", "Bearer hostemu-deploy", site, 201, "X-File-Digest", sum(site), "Content-Type", "application/octet-stream")
	}
	// hostemu starts a hostemu binary as a side, reference a baregin binary
	hostemu := func(name, bin string) *side {
		s := &side{name: name, addr: freeAddr(t), stderr: filepath.Join(dir, "create-"+name+".stderr")}
		s.p = startWith(t, taskset, s.stderr, traced, bin, "--addr", s.addr, "--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text", "--max-world-bytes", "2GiB")
		s.reset = func() {
			do(t, "POST", "http://"+s.addr+"/_emulator/reset", "", "", nil, 200)
			upload(s.addr)
		}
		return s
	}
	reference := func(name string) *side {
		s := &side{name: name, addr: freeAddr(t), stderr: filepath.Join(dir, "create-"+name+".stderr")}
		s.p = startWith(t, taskset, s.stderr, traced, filepath.Join(dir, "baregin"), "-addr", s.addr, "-body", bodyFile)
		s.reset = func() {
			do(t, "POST", "http://"+s.addr+"/_reset", "", "Bearer hostemu-deploy", nil, 200)
			upload(s.addr)
		}
		return s
	}
	emu, bare := hostemu("hostemu", filepath.Join(dir, "hostemu")), reference("bare")
	sides := []*side{emu, bare}
	var before, twinBare *side // the third side, if any: HOSTEMU_PERF_BEFORE's hostemu, or a second reference
	if bin := os.Getenv("HOSTEMU_PERF_BEFORE"); bin != "" {
		before = hostemu("before", bin)
		sides = append(sides, before)
	}
	if twin != "" {
		twinBare = reference("twin")
		sides = append(sides, twinBare)
	}
	type figures struct {
		creates, secs, cpu, gcs, gcMillis, goalMB float64
		user, sys, faults                         float64 // µs of each a create, minor faults a create
	}
	// every order of the sides, each as often: with three, a side that always came
	// after the same other one read 4 % less CPU than its identical twin
	orders := [][]int{{0, 1}, {1, 0}}
	if len(sides) == 3 {
		orders = [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	}
	if parts < 1 {
		t.Fatalf("HOSTEMU_PERF_CREATE_SLICES=%d: at least one slice", parts)
	}
	parts = (parts + len(orders) - 1) / len(orders) * len(orders) // each order as often in every round
	slice := n / parts
	if slice < 1 { // loadgen -n 0 would send creates for as long as -d allows
		t.Fatalf("HOSTEMU_PERF_CREATES=%d in %d slices: fewer than one create a slice", n, parts)
	}
	creates := func(s *side) float64 { // one slice: its seconds
		out := loadReq(t, wrk, taskset, "http://"+s.addr+"/v1/deployments", "120s", slice, "POST", createFile, "",
			"Authorization: Bearer hostemu-deploy", "Content-Type: application/json")
		if got := loadgenField(t, out, "Requests"); got != float64(slice) {
			t.Fatalf("loadgen sent %v creates, not %d:\n%s", got, slice, out)
		}
		return loadgenField(t, out, "Seconds")
	}
	// neighbours: with the twin, the references' CPU in the slices that came right
	// after hostemu's (after[0]) and right after the other reference's (after[1]), ns,
	// and their creates
	type neighbours struct{ ns, creates [2]float64 }
	// round runs one round: every side from its start-up world (unless grow), quiet;
	// then the slices, alternated; then the lifecycles waited out and every side
	// quiet again. Its figures per side are over the whole round.
	round := func(r int) (map[*side]figures, map[*side]*neighbours, float64) {
		type mark struct{ user, sys, faults int64 }
		start := map[*side]mark{}
		for _, s := range sides {
			if !grow || r == 0 {
				s.reset()
			}
		}
		for _, s := range sides {
			quiet(t, s.p.Process.Pid)
		}
		for _, s := range sides {
			u, sy, f := procStat(t, s.p.Process.Pid)
			start[s] = mark{u, sy, f}
		}
		steal := stealTicks(t)
		secs := map[*side]float64{}
		near := map[*side]*neighbours{bare: {}, twinBare: {}}
		var last *side         // the side of the slice before, in this round
		for i := range parts { // the sides in every order in turn: A B, B A; A B C, A C B, B A C, …
			for _, k := range orders[(r*parts+i)%len(orders)] {
				s := sides[k]
				if twinBare == nil || s == emu {
					secs[s] += creates(s)
					last = s
					continue
				}
				ns := runNanos(t, s.p.Process.Pid)
				secs[s] += creates(s)
				ns = runNanos(t, s.p.Process.Pid) - ns
				if last != nil && last != s { // after hostemu's slice (0) or the other reference's (1)
					j := 1
					if last == emu {
						j = 0
					}
					near[s].ns[j] += float64(ns)
					near[s].creates[j] += float64(slice)
				}
				last = s
			}
		}
		// the lifecycles' last steps come 6 s after their creates (queued 1 s,
		// building 5 s): waited out, so that they are the round's work
		time.Sleep(6 * time.Second)
		for _, s := range sides {
			quiet(t, s.p.Process.Pid)
		}
		out := map[*side]figures{}
		for _, s := range sides {
			u, sy, f := procStat(t, s.p.Process.Pid)
			m := start[s]
			c := float64(slice * parts)
			fig := figures{creates: c, secs: secs[s], cpu: float64((u+sy)-(m.user+m.sys)) * 1e4 / c,
				user: float64(u-m.user) * 1e4 / c, sys: float64(sy-m.sys) * 1e4 / c, faults: float64(f-m.faults) / c}
			if traced {
				fig.gcs, fig.gcMillis, fig.goalMB = gcTrace(t, s.stderr, &s.traceOffset)
			}
			out[s] = fig
		}
		return out, near, float64(stealTicks(t)-steal) * 10
	}
	t.Logf("POST /v1/deployments: %d creates a round on each side, in %d slices alternated between the sides, %s | load %s", slice*parts, parts,
		map[bool]string{true: "no reset: the worlds grow", false: "every round from the start-up world"}[grow], loadAvg())
	round(0) // warm-up, not counted
	var ratios, rateRatios, emuCPU, bareCPU, beforeRatios, beforeCPU, changeCPU []float64
	var twinCPU, twinRatios, nearEmu, nearTwin, nearFactor, unflattered []float64
	var total [2]float64 // CPU on each side, µs
	var allNear neighbours
	for r := range rounds {
		figs, near, steal := round(r + 1)
		e, b, o := figs[emu], figs[bare], figs[before]
		ratios, rateRatios = append(ratios, b.cpu/e.cpu), append(rateRatios, (e.creates/e.secs)/(b.creates/b.secs))
		emuCPU, bareCPU = append(emuCPU, e.cpu), append(bareCPU, b.cpu)
		total[0], total[1] = total[0]+e.cpu, total[1]+b.cpu
		t.Logf("  round %d: hostemu %5.1f µs CPU a create (%6.0f/s in its slices) | bare %5.1f µs (%6.0f/s) | %.3f of bare's rate by CPU, %.3f by the slices' wall time | %.0f ms stolen | load %s",
			r, e.cpu, e.creates/e.secs, b.cpu, b.creates/b.secs, b.cpu/e.cpu, (e.creates/e.secs)/(b.creates/b.secs), steal, loadAvg())
		if traced {
			t.Logf("  round %d: collections: hostemu %.0f (%.0f ms CPU, goal %.0f MB), bare %.0f (%.0f ms, %.0f MB); user+sys µs a create, minor faults a create: hostemu %.1f+%.1f, %.2f | bare %.1f+%.1f, %.2f", r,
				e.gcs, e.gcMillis, e.goalMB, b.gcs, b.gcMillis, b.goalMB, e.user, e.sys, e.faults, b.user, b.sys, b.faults)
		}
		if before != nil {
			beforeRatios, beforeCPU, changeCPU = append(beforeRatios, b.cpu/o.cpu), append(beforeCPU, o.cpu), append(changeCPU, e.cpu/o.cpu)
			t.Logf("  round %d: before  %5.1f µs CPU a create: %.3f of bare's rate by CPU; hostemu's CPU a create %.3f× before's", r, o.cpu, b.cpu/o.cpu, e.cpu/o.cpu)
			if traced {
				t.Logf("  round %d: before: %.0f collections (%.0f ms); user+sys %.1f+%.1f, %.2f faults", r, o.gcs, o.gcMillis, o.user, o.sys, o.faults)
			}
		}
		if twinBare != nil {
			w := figs[twinBare]
			// both references' slices, by the side that ran just before them
			var rn neighbours
			for _, s := range []*side{bare, twinBare} {
				for j := range 2 {
					rn.ns[j] += near[s].ns[j]
					rn.creates[j] += near[s].creates[j]
				}
			}
			for j := range 2 {
				allNear.ns[j] += rn.ns[j]
				allNear.creates[j] += rn.creates[j]
			}
			afterEmu, afterTwin := rn.ns[0]/1e3/rn.creates[0], rn.ns[1]/1e3/rn.creates[1]
			f := afterEmu / afterTwin
			// without it: the reference's round figure with its slices after hostemu's
			// read at the cost of those after its twin's (its share of them: the
			// slices' creates)
			share := near[bare].creates[0] / float64(slice*parts)
			u := b.cpu * (1 - share*(1-1/f)) / e.cpu
			twinCPU, twinRatios = append(twinCPU, w.cpu), append(twinRatios, w.cpu/e.cpu)
			nearEmu, nearTwin, nearFactor, unflattered = append(nearEmu, afterEmu), append(nearTwin, afterTwin), append(nearFactor, f), append(unflattered, u)
			t.Logf("  round %d: twin %5.1f µs CPU a create (%.3f of its rate by hostemu's CPU) | the references' slices: %.1f µs a create right after hostemu's (%.0f creates), %.1f right after the other reference's (%.0f): %.3f× | without it %.3f of bare's rate",
				r, w.cpu, w.cpu/e.cpu, afterEmu, rn.creates[0], afterTwin, rn.creates[1], f, u)
		}
	}
	lohi := func(xs []float64) string { return fmt.Sprintf("%.3f–%.3f", slices.Min(xs), slices.Max(xs)) }
	t.Logf("%-30s %.3f of bare's rate by CPU (rounds %s, spread %.3f), %.3f by the slices' wall time (%s); CPU a create hostemu %.1f µs (%.1f–%.1f), bare %.1f µs (%.1f–%.1f) | load %s",
		"POST /v1/deployments", median(ratios), lohi(ratios), slices.Max(ratios)-slices.Min(ratios), median(rateRatios), lohi(rateRatios),
		median(emuCPU), slices.Min(emuCPU), slices.Max(emuCPU), median(bareCPU), slices.Min(bareCPU), slices.Max(bareCPU), loadAvg())
	t.Logf("%-30s all rounds: %.3f of bare's rate by CPU, %.3f× its CPU a create", "", total[1]/total[0], total[0]/total[1])
	if before != nil {
		t.Logf("%-30s before, the same rounds: %.3f of bare's rate by CPU (%s), CPU a create %.1f µs (%.1f–%.1f); hostemu's CPU a create %.3f× before's (%s)", "",
			median(beforeRatios), lohi(beforeRatios), median(beforeCPU), slices.Min(beforeCPU), slices.Max(beforeCPU), median(changeCPU), lohi(changeCPU))
	}
	if twinBare != nil {
		t.Logf("%-30s the twin, the same rounds: CPU a create %.1f µs (%.1f–%.1f), %.3f of its rate by hostemu's CPU (%s)", "",
			median(twinCPU), slices.Min(twinCPU), slices.Max(twinCPU), median(twinRatios), lohi(twinRatios))
		t.Logf("%-30s the references' slices: %.1f µs a create right after hostemu's (rounds %.1f–%.1f), %.1f right after the other reference's (%.1f–%.1f); %.3f× (rounds %s; all rounds %.3f×); without it %.3f of bare's rate (%s)", "",
			median(nearEmu), slices.Min(nearEmu), slices.Max(nearEmu), median(nearTwin), slices.Min(nearTwin), slices.Max(nearTwin),
			median(nearFactor), lohi(nearFactor), (allNear.ns[0]/allNear.creates[0])/(allNear.ns[1]/allNear.creates[1]), median(unflattered), lohi(unflattered))
	}
}

// runNanos is the CPU time of every thread of a process so far, in ns: the
// scheduler's own count (/proc/pid/task/*/schedstat), finer than /proc's ticks, which
// a slice of a tenth of a second would read to 10 %. A thread that has exited is no
// longer counted; Go's runtime keeps its threads.
func runNanos(t *testing.T, pid int) int64 {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no schedstat for %d: %v", pid, err)
	}
	var ns int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread gone since the listing
		}
		v, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		ns += v
	}
	return ns
}

// procStat is a process's user and system CPU ticks and its minor page faults.
func procStat(t *testing.T, pid int) (user, sys, minflt int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	minflt, _ = strconv.ParseInt(fields[7], 10, 64)
	user, _ = strconv.ParseInt(fields[11], 10, 64)
	sys, _ = strconv.ParseInt(fields[12], 10, 64)
	return user, sys, minflt
}

// stealTicks is the time the hypervisor took from CPU 0 (the servers' core), in
// ticks.
func stealTicks(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) > 8 && f[0] == "cpu0" {
			v, _ := strconv.ParseInt(f[8], 10, 64)
			return v
		}
	}
	return 0
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

// startWith is start writing the server's stderr to a file (unless stderr is ""), and
// with GODEBUG=gctrace=1 when traced (the runtime's line for each collection). The
// server's environment is the caller's without HOSTEMU_* (serverEnv).
func startWith(t *testing.T, taskset, stderr string, traced bool, bin string, args ...string) *exec.Cmd {
	t.Helper()
	p := dieWithTest(exec.Command(taskset, append([]string{"-c", "0", bin}, args...)...))
	if stderr != "" { // else stdout and stderr go to the null device
		f, err := os.Create(stderr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		p.Stderr = f
	}
	p.Env = serverEnvNow() // no HOSTEMU_* of the caller's: the servers measured are the ones the flags say
	if traced {
		p.Env = serverEnvNow("GODEBUG=gctrace=1")
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
