package perf_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestBinaryBundle measures, side by side with rounds alternated, the built binary
// starting the 100,000-deployment world of testdata/big from its fixtures and from a
// bundle of it (hostemu replay), each from exec to the first healthy answer; then, on
// one running server, PUT /_emulator/bundle of that bundle against PUT
// /_emulator/state of its state. It asserts nothing about speed.
//
//	HOSTEMU_PERF=1 go test -run TestBinaryBundle -v -timeout 30m ./emulator/internal/perf/
func TestBinaryBundle(t *testing.T) {
	needPerf(t, "compare replay with fixtures and PUT bundle with PUT state (a few minutes, 2 GB of memory)")
	rounds := envInt("HOSTEMU_PERF_ROUNDS", 3)
	dir := t.TempDir()
	bin := filepath.Join(dir, "hostemu")
	build(t, bin, "../../../cmd/hostemu")
	fixtures, _ := filepath.Abs("../../testdata/big/generate-100k.yaml")
	common := []string{"--tls-addr", "", "--ca-dir", ":memory:", "--log-format", "text", "--max-state-bytes", "1GiB"}

	addr := freeAddr(t)
	_, _, stop := healthy(t, bin, addr, append([]string{"--fixtures", fixtures, "--clock", "manual", "--addr", addr}, common...)...)
	defer stop()
	base := "http://" + addr
	bundleFile, stateFile := filepath.Join(dir, "world.hostemu.tgz"), filepath.Join(dir, "state.json")
	download(t, base+"/_emulator/bundle", bundleFile)
	download(t, base+"/_emulator/state", stateFile)

	t.Logf("load before: %s", loadAvg())
	var fromFixtures, fromBundle, cpuFixtures, cpuBundle []float64
	for r := range rounds {
		for _, replay := range []bool{r%2 == 1, r%2 == 0} {
			a := freeAddr(t)
			var took, cpu time.Duration
			var stop func()
			if replay {
				took, cpu, stop = healthy(t, bin, a, append([]string{"replay", bundleFile, "--addr", a}, common...)...)
				fromBundle, cpuBundle = append(fromBundle, took.Seconds()), append(cpuBundle, cpu.Seconds())
			} else {
				took, cpu, stop = healthy(t, bin, a, append([]string{"--fixtures", fixtures, "--clock", "manual", "--addr", a}, common...)...)
				fromFixtures, cpuFixtures = append(fromFixtures, took.Seconds()), append(cpuFixtures, cpu.Seconds())
			}
			stop()
		}
	}
	t.Logf("exec → healthy: replay of the bundle %.2f s (%.2f–%.2f, %.2f s CPU), from the fixtures %.2f s (%.2f–%.2f, %.2f s CPU): %.2f× | load %s",
		median(fromBundle), slices.Min(fromBundle), slices.Max(fromBundle), median(cpuBundle), median(fromFixtures), slices.Min(fromFixtures), slices.Max(fromFixtures),
		median(cpuFixtures), median(fromBundle)/median(fromFixtures), loadAvg())

	var putBundle, putState []float64
	for r := range rounds {
		for _, bundle := range []bool{r%2 == 0, r%2 == 1} {
			if bundle {
				putBundle = append(putBundle, put(t, base+"/_emulator/bundle", bundleFile, "application/gzip").Seconds())
			} else {
				putState = append(putState, put(t, base+"/_emulator/state", stateFile, "application/json").Seconds())
			}
		}
	}
	t.Logf("PUT /_emulator/bundle %.2f s (%.2f–%.2f), PUT /_emulator/state %.2f s (%.2f–%.2f): %.2f× | load %s",
		median(putBundle), slices.Min(putBundle), slices.Max(putBundle), median(putState), slices.Min(putState), slices.Max(putState),
		median(putBundle)/median(putState), loadAvg())
}

// healthy starts the binary and returns the time from exec to its first 200 of
// /_emulator/health on addr, the process's CPU time until then, and what stops it.
func healthy(t *testing.T, bin, addr string, args ...string) (time.Duration, time.Duration, func()) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	start := time.Now()
	p := dieWithTest(exec.Command(bin, args...))
	p.Env = serverEnvNow() // the flags alone configure it
	var stderr bytes.Buffer
	p.Stderr = &stderr
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { p.Process.Kill(); p.Wait() }
	for {
		res, err := client.Get("http://" + addr + "/_emulator/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				took := time.Since(start)
				return took, cpuTime(t, p.Process.Pid), stop
			}
		}
		if time.Since(start) > 2*time.Minute {
			stop()
			t.Fatalf("%v: never healthy: %s", args, stderr.Bytes())
		}
		// a child process has no other way to say it is ready: polled every 2 % of the
		// time so far (0.1 to 1 ms), fine for a start of milliseconds and light beside
		// a replay of a second
		time.Sleep(min(max(time.Since(start)/50, 100*time.Microsecond), time.Millisecond))
	}
}

func download(t *testing.T, url, file string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, res.Body); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
}

func put(t *testing.T, url, file, ctype string) time.Duration {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	req, _ := http.NewRequest("PUT", url, f)
	req.ContentLength = fi.Size()
	req.Header.Set("Content-Type", ctype)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if res.StatusCode != 200 {
		t.Fatalf("PUT %s: %d %s", url, res.StatusCode, b)
	}
	return took
}
