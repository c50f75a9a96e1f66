package emulator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// hostilePath is a path the glob `*a…a*b` used to backtrack on: runs of a that stop
// one short of the pattern's run, so every start position matched almost all of it.
func hostilePath(run int) string {
	seg := strings.Repeat("a", run-1) + "c"
	return "/v1/" + strings.Repeat(seg, 2048/run+1)[:2040]
}

// hostileGlob is `*a…a*b` with a run of a's.
func hostileGlob(run int) string { return "*" + strings.Repeat("a", run) + "*b" }

// hostileBody is a JSON body of about 4 KiB that a body match must decode whole.
var hostileBody = `{"a":{"b":{"x":[` + strings.Repeat(`"abcdefghijklmnopqrstuvwxyz",`, 140) + `0]}}}`

// fillJournal records n requests of hostile paths and 4 KiB JSON bodies (each a 404,
// journaled).
func fillJournal(t testing.TB, e *env, n int) {
	t.Helper()
	p := hostilePath(1000)
	for range n {
		hr, _ := http.NewRequest("POST", e.url+p, strings.NewReader(hostileBody))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Authorization", "Bearer t-read")
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
}

// pendingAwaits starts n awaits of match for count entries and returns a function
// that cancels them (when cancel) or waits for them, and returns their statuses.
func pendingAwaits(t testing.TB, e *env, n, count int, match map[string]any) (end func(cancel bool) []int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	statuses := make([]int, n)
	body, _ := json.Marshal(map[string]any{"requests": match, "count": count, "timeout": "60s"})
	for i := range n {
		wg.Go(func() {
			hr, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/_emulator/await", strings.NewReader(string(body)))
			hr.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(hr); err == nil {
				statuses[i] = res.StatusCode
				res.Body.Close()
			}
		})
	}
	return func(stop bool) []int {
		if stop {
			cancel()
		}
		wg.Wait()
		cancel()
		return statuses
	}
}

// latencies makes n POST /v1/projects (refused: a read token) and returns their durations, sorted.
func latencies(t testing.TB, e *env, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		hr, _ := http.NewRequest("POST", e.url+"/v1/projects", strings.NewReader(hostileBody))
		hr.Header.Set("Authorization", "Bearer t-read")
		hr.Header.Set("Content-Type", "application/json")
		began := time.Now()
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		out = append(out, time.Since(began))
	}
	slices.Sort(out)
	return out
}

// TestMeasureJournalAwaits prints the figures of docs/security.md (journal queries and
// awaits): the time of a hostile query, and GET /v1/projects latency with hostile
// awaits pending. It asserts nothing about time; run it with HOSTEMU_MEASURE=1.
func TestMeasureJournalAwaits(t *testing.T) {
	if os.Getenv("HOSTEMU_MEASURE") == "" {
		t.Skip("set HOSTEMU_MEASURE=1 to measure")
	}
	e := newEnv(t, func(o *emulator.Options) { o.JournalSize = 1000 })
	fillJournal(t, e, 1000)
	e.get("/_emulator/requests?limit=1", "") // warm up: the first answer loads the OpenAPI checker
	began := time.Now()
	r := e.get("/_emulator/requests?path="+hostileGlob(1000), "")
	t.Logf("query path=*a{1000}*b over 1,000 entries: %d in %v", r.Status, time.Since(began))
	pct := func(d []time.Duration, p int) time.Duration { return d[len(d)*p/100] }
	base := latencies(t, e, 400)
	t.Logf("POST /v1/projects, no await: p50 %v p99 %v", pct(base, 50), pct(base, 99))
	for _, c := range []struct {
		name  string
		match map[string]any
	}{
		{"4 path awaits", map[string]any{"path": hostileGlob(1000)}},
		{"4 body awaits", map[string]any{"body": "a.b.c=1"}},
	} {
		end := pendingAwaits(t, e, 4, 1_000_000, c.match)
		time.Sleep(200 * time.Millisecond) // measurement only: let the awaits start
		d := latencies(t, e, 400)
		end(true)
		t.Logf("POST /v1/projects, %s pending: p50 %v p99 %v", c.name, pct(d, 50), pct(d, 99))
	}
}

// Issue 32 item 5: pending awaits cost the API a bounded amount of work. 8 awaits
// that hold the worst filters (a glob that made the old matcher backtrack, a body
// match that decodes every 4 KiB body) wait while 200 requests are journaled; each
// await evaluates its filter on each entry once (the journal's 500 when it starts,
// then each new one), never under the journal's lock, so the work is at most
// awaits × (entries + requests), where it was awaits × entries × requests.
func TestPendingAwaitsBounded(t *testing.T) {
	t.Parallel()
	const (
		entries  = 500
		awaits   = 4 // of each kind
		requests = 200
	)
	e := newEnv(t, func(o *emulator.Options) { o.JournalSize = entries })
	fillJournal(t, e, entries)
	w := emulator.World(e.emu)
	before := w.JournalEvaluations()
	byPath := pendingAwaits(t, e, awaits, 1, map[string]any{"path": hostileGlob(1000)})
	byBody := pendingAwaits(t, e, awaits, 1, map[string]any{"body": "a.b.c=1"})
	// the awaits are in place once each has looked at the journal's entries (the
	// counter is all there is to wait on)
	for deadline := time.Now().Add(30 * time.Second); w.JournalEvaluations()-before < 2*awaits*entries; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("the awaits evaluated %d entries in 30 s", w.JournalEvaluations()-before)
		}
	}
	latencies(t, e, requests)
	// the request both kinds wait for
	hr, _ := http.NewRequest("POST", e.url+"/v1/"+strings.Repeat("a", 1000)+"b", strings.NewReader(`{"a":{"b":{"c":1}}}`))
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, st := range append(byPath(false), byBody(false)...) {
		if st != 200 {
			t.Fatalf("an await answered %d", st)
		}
	}
	work := w.JournalEvaluations() - before
	if bound := uint64(2 * awaits * (entries + requests + 1)); work > bound {
		t.Errorf("%d awaits evaluated %d entries for %d requests over %d entries, over %d", 2*awaits, work, requests, entries, bound)
	}
	t.Logf("%d awaits, %d entries, %d requests: %d evaluations", 2*awaits, entries, requests, work)
}
