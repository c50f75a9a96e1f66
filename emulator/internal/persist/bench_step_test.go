package persist

import (
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// BenchmarkAppendRecordStep is the record of a preview deployment's ready step, with
// and without its (unchanged) project: what the writer encodes per step under --state.
func BenchmarkAppendRecordStep(b *testing.B) {
	at := time.UnixMilli(1_790_000_000_123).UTC()
	d := state.Deployment{ID: "dpl_fogl1a439liih1m1x054", ProjectID: "prj_demo", URL: "http://demo-shop-fogl1a439liih1m1x054.hostemu.localhost:4743",
		Target: "preview", CreatedAt: at, Env: map[string]string{"FEATURE": "on"}, Files: map[string]string{"index.html": strings.Repeat("f", 64)}}
	d.SetStatus(nil, state.StatusQueued, nil, at)
	d.SetStatus(nil, state.StatusBuilding, nil, at.Add(time.Second))
	d.SetStatus(nil, state.StatusReady, nil, at.Add(6*time.Second))
	p := state.Project{ID: "prj_demo", Name: "demo-shop", CreatedAt: at, Env: map[string]string{"API_URL": "https://api.demo-shop.test", "NODE_ENV": "production"}, ProductionDeploymentID: "dpl_demolaunch"}
	for _, c := range []struct {
		name string
		c    state.Change
	}{{"deployment", state.Change{Deployment: &d}}, {"with-project", state.Change{Deployment: &d, Project: &p}}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for i := range b.N {
				if len(buf) > 60<<10 {
					buf = buf[:0]
				}
				var err error
				if buf, err = AppendRecord(buf, uint64(i), &c.c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
