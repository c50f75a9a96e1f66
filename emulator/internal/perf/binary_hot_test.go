package perf_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
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

// TestBinaryHotPaths is TestBinaryVsGin for every hot path: the built hostemu binary
// (as users run it, with and without --state) against the baregin binary serving the
// bare handlers of package bare (and http.FileServer for the edge; for the GET, the
// reference doing the same work, as TestBinaryVsGin's, and plain bare gin in a row of
// its own, informative), each server pinned
// to CPU 0 and the load (wrk's or loadgen's 16 connections) to CPU 1, rounds
// alternated. It prints requests per second, their ratio, and each server's CPU time
// per request; encrypt+decrypt is the time of one of each. It asserts nothing about
// speed.
//
//	HOSTEMU_PERF=1 go test -run TestBinaryHotPaths -v ./emulator/internal/perf/
//
// HOSTEMU_PERF_ROUNDS sets the rounds (5), HOSTEMU_PERF_ONLY a regexp of the paths,
// HOSTEMU_PERF_SECS a round's seconds (2); HOSTEMU_PERF_VERBOSE=1 prints every round.
// Each path starts with a warm-up round on each side, not counted; after each round
// the harness waits until that server is quiet again (and, after hostemu's creates,
// until their lifecycles are over), and its CPU figure counts that wait's CPU too.
// POST /v1/deployments without --state is measured by createRounds instead: rounds
// of an equal count of creates from the start-up world, in slices alternated between
// the sides.
func TestBinaryHotPaths(t *testing.T) {
	wrk, taskset := tools(t, "build both binaries and compare every hot path (a few minutes)")
	if filepath.Base(wrk) != "loadgen" {
		t.Skip("the POSTs need loadgen: run with wrk off the PATH")
	}
	rounds := envInt("HOSTEMU_PERF_ROUNDS", 5)
	only := regexp.MustCompile(os.Getenv("HOSTEMU_PERF_ONLY"))
	dir := t.TempDir()
	build(t, filepath.Join(dir, "hostemu"), "../../../cmd/hostemu")
	build(t, filepath.Join(dir, "baregin"), "./baregin")
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	emuArgs := []string{"--tls-addr", "", "--ca-dir", ":memory:", "--rate-limits", "off", "--log-format", "text", "--max-world-bytes", "2GiB"}
	emuAddr, emuStateAddr := freeAddr(t), freeAddr(t)
	emu := start(t, taskset, filepath.Join(dir, "hostemu"), append([]string{"--addr", emuAddr}, emuArgs...)...)
	emuState := start(t, taskset, filepath.Join(dir, "hostemu"), append([]string{"--addr", emuStateAddr, "--state", filepath.Join(dir, "state.json")}, emuArgs...)...)
	// the GET's reference does the same work (TestBinaryVsGin: the id found in a map,
	// hostemu's answer head); plain bare gin's row beside it is informative
	getPath, refArgs := sameWork(t, "http://"+emuAddr, dir)
	body := file("body.json", get(t, "http://"+emuAddr+getPath))

	// the edge: a default deployment's site, and the same bytes from http.FileServer
	var dep struct{ URL string }
	json.Unmarshal(get(t, "http://"+emuAddr+getPath), &dep)
	u, err := url.Parse(dep.URL)
	if err != nil || u.Host == "" {
		t.Fatalf("deployment url %q", dep.URL)
	}
	edgeHost := u.Host
	page := do(t, "GET", "http://"+emuAddr+"/", edgeHost, "", nil, 200)
	ginAddr, ginStateAddr, ginEdgeAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	bare := start(t, taskset, filepath.Join(dir, "baregin"), "-addr", ginAddr, "-body", body, "-edge-addr", ginEdgeAddr, "-edge-file", file("page.html", page))
	bareState := start(t, taskset, filepath.Join(dir, "baregin"), "-addr", ginStateAddr, "-body", body, "-state-log", filepath.Join(dir, "bare.log"))
	refAddr := freeAddr(t)
	ref := start(t, taskset, filepath.Join(dir, "baregin"), append([]string{"-addr", refAddr, "-body", body}, refArgs...)...)
	if got := do(t, "GET", "http://"+refAddr+getPath, "", "Bearer hostemu-read", nil, 200); !bytes.Equal(got, get(t, "http://"+emuAddr+getPath)) {
		t.Fatal("the reference answers other bytes than hostemu")
	}
	if got := do(t, "GET", "http://"+ginEdgeAddr+"/", "", "", nil, 200); !bytes.Equal(got, page) {
		t.Fatal("the file server answers other bytes")
	}

	site := []byte("<!doctype html><h1>Hello</h1>")
	for _, a := range []string{emuAddr, emuStateAddr, ginAddr, ginStateAddr} {
		do(t, "POST", "http://"+a+"/v1/files", "", "Bearer hostemu-deploy", site, 201, "X-File-Digest", sum(site), "Content-Type", "application/octet-stream")
	}
	create := file("create.json", []byte(`{"project_id":"prj_demo","files":{"index.html":"`+sum(site)+`"},"target":"preview","env":{"FEATURE":"on"}}`))

	type side struct {
		p          *exec.Cmd
		addr, host string
		body       string
	}
	type hot struct {
		name, method, path string
		headers            []string
		emu, bare          side
	}
	deploy, cipherKey := "Authorization: Bearer hostemu-deploy", "Authorization: Bearer hostemu-cipher"
	json := "Content-Type: application/json"
	cases := []hot{
		{"GET /v1/deployments/{id}", "GET", getPath, []string{"Authorization: Bearer hostemu-read"}, side{p: emu, addr: emuAddr}, side{p: ref, addr: refAddr}},
		{"GET /v1/deployments/{id}, plain gin", "GET", getPath, []string{"Authorization: Bearer hostemu-read"}, side{p: emu, addr: emuAddr}, side{p: bare, addr: ginAddr}},
		{"POST /v1/deployments", "POST", "/v1/deployments", []string{deploy, json}, side{p: emu, addr: emuAddr, body: create}, side{p: bare, addr: ginAddr, body: create}},
		{"POST /v1/deployments --state", "POST", "/v1/deployments", []string{deploy, json}, side{p: emuState, addr: emuStateAddr, body: create}, side{p: bareState, addr: ginStateAddr, body: create}},
	}
	for _, size := range []int{1 << 10, 1 << 20} {
		b := make([]byte, size)
		rand.Read(b)
		f := file("file"+strconv.Itoa(size), b)
		cases = append(cases, hot{"POST /v1/files " + size1(size), "POST", "/v1/files", []string{deploy, "Content-Type: application/octet-stream", "X-File-Digest: " + sum(b)},
			side{p: emu, addr: emuAddr, body: f}, side{p: bare, addr: ginAddr, body: f}})
	}
	for _, size := range []int{1 << 10, 64 << 10} {
		enc := []byte(`{"payload":"` + strings.Repeat("x", size) + `"}`)
		encFile := file("enc"+strconv.Itoa(size), enc)
		decFor := func(addr string) string {
			env := do(t, "POST", "http://"+addr+"/v1/encrypt", "", "Bearer hostemu-cipher", enc, 200, "Content-Type", "application/json")
			env = env[len(`{"envelope":"`) : len(env)-2]
			return file("dec"+strconv.Itoa(size)+addr, append(append([]byte(`{"envelope":"`), env...), `"}`...))
		}
		cases = append(cases,
			hot{"encrypt " + size1(size), "POST", "/v1/encrypt", []string{cipherKey, json}, side{p: emu, addr: emuAddr, body: encFile}, side{p: bare, addr: ginAddr, body: encFile}},
			hot{"decrypt " + size1(size), "POST", "/v1/decrypt", []string{cipherKey, json}, side{p: emu, addr: emuAddr, body: decFor(emuAddr)}, side{p: bare, addr: ginAddr, body: decFor(ginAddr)}})
	}
	cases = append(cases, hot{"edge small file", "GET", "/", nil, side{p: emu, addr: emuAddr, host: edgeHost}, side{p: bare, addr: ginEdgeAddr}})

	secs := envInt("HOSTEMU_PERF_SECS", 2)
	verbose := os.Getenv("HOSTEMU_PERF_VERBOSE") != ""
	// run loads one side for a round, then waits until that process is quiet again
	// before the other side's round: what a round leaves behind (a collection the
	// round's garbage started, the creates' lifecycle transitions, memory given back)
	// would otherwise run on the same core during the other side's round, taking its
	// rate, and be charged to neither. The CPU figure is the round's and its
	// aftermath's over the round's requests (inRound: the round's alone); the rate
	// is the round's requests over the round's time plus the aftermath's CPU time
	// (the core that work takes from a steady stream of requests; measured is the
	// rate it leaves), so that work put off is not work saved (raw: the round's).
	run := func(c hot, s side) (rps, cpuMicros, inRound, raw float64) {
		before := cpuTime(t, s.p.Process.Pid)
		rps, inRound = loadRate(t, s.p, wrk, taskset, secs, "http://"+s.addr+c.path, c.method, s.body, s.host, c.headers...)
		if s.p == c.emu.p && strings.HasPrefix(c.name, "POST /v1/deployments") {
			// hostemu's creates leave lifecycles behind, whose last step is 6 s after
			// each create (the default scenario: queued 1 s, building 5 s): waited for
			// (nothing to wait on from outside), so that they are the round's work,
			// not run during the reference's round
			time.Sleep(6 * time.Second)
		}
		quiet(t, s.p.Process.Pid)
		n := rps * float64(secs)
		cpuMicros = (cpuTime(t, s.p.Process.Pid) - before).Seconds() * 1e6 / n
		after := max(cpuMicros-inRound, 0) * n / 1e6 // seconds of CPU after the round
		return n / (float64(secs) + after), cpuMicros, inRound, rps
	}
	t.Logf("load before: %s", loadAvg())
	perReq := map[string][2][]float64{} // name: time per request (from the rate) on each side, by round
	for _, c := range cases {
		if !only.MatchString(c.name) {
			continue
		}
		if c.name == "POST /v1/deployments" && os.Getenv("HOSTEMU_PERF_CREATE_WORLD") != "timed" {
			createRounds(t, wrk, taskset, dir, body, create, site, rounds)
			continue
		}
		// a warm-up round on each side, not counted: both worlds start the counted
		// rounds grown past their first sizes, with the collector paced
		run(c, c.emu)
		run(c, c.bare)
		var e, g, ec, gc, ratios, cpus []float64
		var all [2]struct{ n, secs, cpu float64 } // every round's requests, time and CPU on each side
		for r := range rounds {
			var er, ecr, eIn, eRaw, gr, gcr, gIn, gRaw float64
			if r%2 == 0 {
				er, ecr, eIn, eRaw = run(c, c.emu)
				gr, gcr, gIn, gRaw = run(c, c.bare)
			} else {
				gr, gcr, gIn, gRaw = run(c, c.bare)
				er, ecr, eIn, eRaw = run(c, c.emu)
			}
			if verbose {
				t.Logf("  round %d: hostemu %7.0f req/s (in the round %7.0f) %6.1f µs CPU (in the round %6.1f) | bare %7.0f req/s (%7.0f) %6.1f µs CPU (%6.1f) | %.2f, %.2f×",
					r, er, eRaw, ecr, eIn, gr, gRaw, gcr, gIn, er/gr, ecr/gcr)
			}
			for i, x := range [][3]float64{{eRaw, er, ecr}, {gRaw, gr, gcr}} {
				n := x[0] * float64(secs)
				all[i].n, all[i].secs, all[i].cpu = all[i].n+n, all[i].secs+n/x[1], all[i].cpu+n*x[2]
			}
			e, g, ec, gc = append(e, er), append(g, gr), append(ec, ecr), append(gc, gcr)
			ratios, cpus = append(ratios, er/gr), append(cpus, ecr/gcr)
			pr := perReq[c.name]
			pr[0], pr[1] = append(pr[0], 1/er), append(pr[1], 1/gr)
			perReq[c.name] = pr
		}
		t.Logf("%-36s hostemu %7.0f req/s %6.1f µs CPU | bare %7.0f req/s %6.1f µs CPU | %.2f of bare (min %.2f, max %.2f), %.2f× its CPU | load %s",
			c.name, median(e), median(ec), median(g), median(gc), median(ratios), slices.Min(ratios), slices.Max(ratios), median(cpus), loadAvg())
		// all rounds together: a round of a growing world may or may not hold one of its
		// few, large collections, which swings its own figures by half
		t.Logf("%-36s all rounds: %.2f of bare's rate, %.2f× its CPU per request", "", (all[0].n/all[0].secs)/(all[1].n/all[1].secs), (all[0].cpu/all[0].n)/(all[1].cpu/all[1].n))
	}
	for _, size := range []string{"1 KiB", "64 KiB"} {
		enc, dec := perReq["encrypt "+size], perReq["decrypt "+size]
		if enc[0] == nil || dec[0] == nil {
			continue
		}
		var ratios []float64
		for r := range enc[0] {
			ratios = append(ratios, (enc[1][r]+dec[1][r])/(enc[0][r]+dec[0][r]))
		}
		t.Logf("%-36s %.2f of bare (min %.2f, max %.2f)", "encrypt+decrypt "+size, median(ratios), slices.Min(ratios), slices.Max(ratios))
	}
	if only.MatchString("exec") {
		execHealthy(t, filepath.Join(dir, "hostemu"), filepath.Join(dir, "baregin"), body)
	}
}

// quiet waits until the process pid has used no CPU tick for 200 ms (below 5 % of a
// core), at most 10 s.
func quiet(t *testing.T, pid int) {
	t.Helper()
	last, still := cpuTime(t, pid), 0
	for deadline := time.Now().Add(10 * time.Second); still < 2 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // /proc has no way to wait for a process to go idle
		now := cpuTime(t, pid)
		if now == last {
			still++
		} else {
			still = 0
		}
		last = now
	}
}

// execHealthy prints the median of 10 starts of the binary with the default fixtures,
// from exec to the first answer of /_emulator/health, beside the median of 10 starts
// of the reference (bare gin answering the same route as soon as it listens, -body
// its GET's bytes), the two in turn: what a start costs on this machine before any of
// hostemu's work, the floor of the row.
func execHealthy(t *testing.T, bin, ref, body string) {
	var took, refTook []float64
	for i := range 20 {
		addr := freeAddr(t)
		if i%4 == 0 || i%4 == 3 { // hostemu first in one pair, second in the next
			d, _, stop := healthy(t, bin, addr, "--addr", addr, "--tls-addr", "", "--ca-dir", ":memory:", "--log-format", "text")
			stop()
			took = append(took, float64(d))
		} else {
			d, _, stop := healthy(t, ref, addr, "-addr", addr, "-body", body)
			stop()
			refTook = append(refTook, float64(d))
		}
	}
	slices.Sort(took)
	slices.Sort(refTook)
	t.Logf("%-36s median %s (min %s, max %s) | the reference %s (%s–%s): %.2f× | load %s", "exec → healthy",
		dur(took[len(took)/2]), dur(took[0]), dur(took[len(took)-1]),
		dur(refTook[len(refTook)/2]), dur(refTook[0]), dur(refTook[len(refTook)-1]), took[len(took)/2]/refTook[len(refTook)/2], loadAvg())
}

// do sends one request and fails the test unless it gets want; headers are name,
// value pairs.
func do(t *testing.T, method, url, host, auth string, body []byte, want int, headers ...string) []byte {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, res.StatusCode, want, b.Bytes())
	}
	return b.Bytes()
}
