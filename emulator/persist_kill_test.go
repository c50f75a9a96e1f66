package emulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// killChildEnv names the state file of TestPersistKillChild's server.
const killChildEnv = "HOSTEMU_TEST_KILL_CHILD_STATE"

// TestPersistKillChild is the server TestPersistKill9 runs and kills: this test binary
// re-executed. It prints its URL, then serves until it is killed.
func TestPersistKillChild(t *testing.T) {
	path := os.Getenv(killChildEnv)
	if path == "" {
		t.Skip("the server process of TestPersistKill9")
	}
	srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", StateFile: path, RateLimitsOff: true, Seed: 7})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println(srv.URL())
	srv.Serve()
}

// acked is what the server answered 2xx to: after any crash, all of it must be there.
type acked struct {
	mu          sync.Mutex
	deployments map[string]bool
	domains     map[string]bool
	live        map[string]bool // minted and not revoked
	revoked     map[string]bool
}

func newAcked() *acked {
	return &acked{deployments: map[string]bool{}, domains: map[string]bool{}, live: map[string]bool{}, revoked: map[string]bool{}}
}

// TestPersistKill9 kills a --state server with SIGKILL at seeded moments while clients
// create deployments, add domains, mint and revoke tokens, and checks after each
// restart that every acknowledged write is there and the state is whole.
func TestPersistKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills 25 server processes")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	rng := rand.New(rand.NewPCG(20261121, 9))
	a := newAcked()
	const rounds, workers = 25, 4
	for round := range rounds {
		url, kill := startKillChild(t, path)
		checkAcked(t, round, url, a)
		switch round {
		case 8: // a whole-state load is durable too
			snap := mustDo(t, "GET", url+"/_emulator/state", "", nil, 200)
			mustDo(t, "PUT", url+"/_emulator/state", "", snap, 200)
		case 16: // and so is a reset to the fixtures
			mustDo(t, "POST", url+"/_emulator/reset", "", nil, 200)
			a = newAcked()
		}
		killAfter := int64(1 + rng.IntN(150))
		var n atomic.Int64
		killNow := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runKillClient(url, round, w, a, func() {
					if n.Add(1) == killAfter {
						once.Do(func() { close(killNow) })
					}
				})
			}()
		}
		select {
		case <-killNow:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: only %d writes acknowledged in 20 s", round, n.Load())
		}
		kill()
		wg.Wait()
	}
	url, kill := startKillChild(t, path)
	defer kill()
	checkAcked(t, rounds, url, a)
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp")); len(m) != 0 {
		t.Errorf("temporary files left after start: %v", m)
	}
}

// startKillChild runs TestPersistKillChild on path and returns its URL and what kills
// it with SIGKILL (and waits for it).
func startKillChild(t *testing.T, path string) (string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPersistKillChild$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not start: %q %v\n%s", line, err, stderr.String())
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			cmd.Process.Kill() // SIGKILL
			cmd.Wait()
		})
	}
	t.Cleanup(kill)
	return strings.TrimSpace(line), kill
}

var killClient = &http.Client{Timeout: 10 * time.Second}

// do sends a request and returns the status and body; a failed request (the server
// died) is status 0.
func do(method, url, token string, body []byte) (int, []byte) {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := killClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil
	}
	return res.StatusCode, b
}

func mustDo(t *testing.T, method, url, token string, body []byte, want int) []byte {
	t.Helper()
	status, b := do(method, url, token, body)
	if status != want {
		t.Fatalf("%s %s: %d %s", method, url, status, b)
	}
	return b
}

// runKillClient writes until the server dies, recording what was acknowledged and
// calling ack after each.
func runKillClient(url string, round, worker int, a *acked, ack func()) {
	rng := rand.New(rand.NewPCG(uint64(round), uint64(worker)))
	var mine []string // tokens this worker minted and may revoke
	for i := 0; ; i++ {
		var status int
		var b []byte
		switch op := rng.IntN(10); {
		case op < 6:
			status, b = do("POST", url+"/v1/deployments", "t-deploy", []byte(`{"project_id":"prj_shop","files":{}}`))
			if status == 201 {
				var d struct{ ID string }
				json.Unmarshal(b, &d)
				a.mu.Lock()
				a.deployments[d.ID] = true
				a.mu.Unlock()
			}
		case op < 8:
			host := fmt.Sprintf("r%d-w%d-%d.kill.test", round, worker, i)
			status, _ = do("POST", url+"/v1/projects/prj_blog/domains", "t-admin", []byte(`{"hostname":"`+host+`"}`))
			if status == 201 {
				a.mu.Lock()
				a.domains[host] = true
				a.mu.Unlock()
			}
		case op < 9 || len(mine) == 0:
			status, b = do("POST", url+"/_emulator/tokens", "", []byte(`{"scope":"read"}`))
			if status == 201 {
				var tok struct{ Token string }
				json.Unmarshal(b, &tok)
				mine = append(mine, tok.Token)
				a.mu.Lock()
				a.live[tok.Token] = true
				a.mu.Unlock()
			}
		default:
			tok := mine[0]
			mine = mine[1:]
			a.mu.Lock()
			delete(a.live, tok) // unacknowledged, it may or may not have happened
			a.mu.Unlock()
			status, _ = do("DELETE", url+"/_emulator/tokens/"+tok, "", nil)
			if status == 200 {
				a.mu.Lock()
				a.revoked[tok] = true
				a.mu.Unlock()
			}
		}
		switch {
		case status == 0:
			return
		case status >= 300:
			panic(fmt.Sprintf("unexpected status %d: %s", status, b))
		}
		ack()
	}
}

// checkAcked checks that the restarted server holds every acknowledged write and that
// its state is whole: it exports, and the export imports back unchanged.
func checkAcked(t *testing.T, round int, url string, a *acked) {
	t.Helper()
	raw := mustDo(t, "GET", url+"/_emulator/state", "", nil, 200)
	var snap struct {
		Tokens      []struct{ Token string }
		Deployments []struct{ ID string }
		Domains     []struct{ Hostname string }
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatalf("round %d: state export: %v", round, err)
	}
	has := func(keys []string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	var ids, hosts, toks []string
	for _, d := range snap.Deployments {
		ids = append(ids, d.ID)
	}
	for _, d := range snap.Domains {
		hosts = append(hosts, d.Hostname)
	}
	for _, tk := range snap.Tokens {
		toks = append(toks, tk.Token)
	}
	gotIDs, gotHosts, gotToks := has(ids), has(hosts), has(toks)
	a.mu.Lock()
	defer a.mu.Unlock()
	lost := 0
	for id := range a.deployments {
		if !gotIDs[id] {
			lost++
			t.Errorf("round %d: acknowledged deployment %s lost", round, id)
		}
	}
	for h := range a.domains {
		if !gotHosts[h] {
			lost++
			t.Errorf("round %d: acknowledged domain %s lost", round, h)
		}
	}
	for tk := range a.live {
		if !gotToks[tk] {
			lost++
			t.Errorf("round %d: acknowledged token %s lost", round, tk)
		}
	}
	for tk := range a.revoked {
		if gotToks[tk] {
			lost++
			t.Errorf("round %d: revoked token %s is back", round, tk)
		}
	}
	if lost > 0 {
		t.FailNow()
	}
	if round%5 == 0 { // the state is whole: it imports back as it is
		mustDo(t, "PUT", url+"/_emulator/state", "", raw, 200)
	}
	t.Logf("round %d: %d deployments, %d domains, %d live and %d revoked tokens acknowledged, all there", round, len(a.deployments), len(a.domains), len(a.live), len(a.revoked))
}
