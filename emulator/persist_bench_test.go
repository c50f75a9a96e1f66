package emulator

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// BenchmarkPersistCreate100k creates deployments from 8 clients over loopback HTTP in a
// world of 100,000 deployments: without --state, with it, and with it while a compaction
// starts every 2 s (the cadence of the old whole-state saver). It reports creates per second
// and the worst latency of a create.
func BenchmarkPersistCreate100k(b *testing.B) {
	for _, mode := range []string{"memory", "state", "state+compacting"} {
		b.Run(mode, func(b *testing.B) {
			opts := Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, RateLimitsOff: true, JournalSize: 10}
			if mode != "memory" {
				opts.StateFile = filepath.Join(b.TempDir(), "state.json")
			}
			srv, err := Listen(opts)
			if err != nil {
				b.Fatal(err)
			}
			go srv.Serve()
			defer srv.Shutdown(b.Context())
			e := srv.Emulator()
			snap := e.world.Export()
			start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for i := range 100_000 {
				at := start.Add(-time.Duration(i) * time.Second)
				snap.Deployments = append(snap.Deployments, state.Deployment{
					ID: fmt.Sprintf("dpl_bench%07d", i), ProjectID: "prj_blog", URL: "https://blog.hostemu.test", Target: "preview",
					Status: "ready", CreatedAt: at, Timings: state.Timings{QueuedAt: &at}, Files: map[string]string{},
				})
			}
			if err := e.world.Import(snap); err != nil {
				b.Fatal(err)
			}
			if err := e.world.Durable(b.Context()); err != nil { // the loaded state's snapshot is written
				b.Fatal(err)
			}
			stop := make(chan struct{})
			var compactions sync.WaitGroup
			if mode == "state+compacting" {
				compactions.Add(1)
				go func() {
					defer compactions.Done()
					t := time.NewTicker(2 * time.Second)
					defer t.Stop()
					for {
						e.saver.Compact()
						select {
						case <-stop:
							return
						case <-t.C:
						}
					}
				}()
			}
			const clients, each = 8, 1500
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			var worst time.Duration
			var mu sync.Mutex
			for b.Loop() {
				t0 := time.Now()
				var wg sync.WaitGroup
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var mine time.Duration
						for range each {
							req, _ := http.NewRequest("POST", srv.URL()+"/v1/deployments", strings.NewReader(`{"project_id":"prj_shop","files":{}}`))
							req.Header.Set("Authorization", "Bearer t-deploy")
							req.Header.Set("Content-Type", "application/json")
							s := time.Now()
							res, err := client.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							io.Copy(io.Discard, res.Body)
							res.Body.Close()
							mine = max(mine, time.Since(s))
							if res.StatusCode != 201 {
								b.Errorf("status %d", res.StatusCode)
								return
							}
						}
						mu.Lock()
						worst = max(worst, mine)
						mu.Unlock()
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(clients*each)/time.Since(t0).Seconds(), "creates/s")
			}
			close(stop)
			compactions.Wait()
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
		})
	}
}
