package emulator_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// Creates, and the steps of their lifecycles (each through the ref its create gave),
// racing loads of a state (PUT /_emulator/state, which replaces the store's tables):
// run with -race. Every create is answered, every deployment read is whole, and a
// create after the loads runs its lifecycle to its end.
func TestLifecyclesRaceStateLoads(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.ClockMode = clock.Auto })
	snap := string(e.get("/_emulator/state", "").Body)
	create := map[string]any{"project_id": "prj_shop", "files": map[string]string{"index.html": strings.Repeat("ab", 32)}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 10 {
			hr, _ := http.NewRequest("PUT", e.url+"/_emulator/state", strings.NewReader(snap))
			hr.Header.Set("Content-Type", "application/json")
			r, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Error(err)
				return
			}
			r.Body.Close()
			if r.StatusCode != 200 {
				t.Errorf("PUT state: %d", r.StatusCode)
				return
			}
		}
	}()
	var ids []string
	for range 40 {
		r := e.post("/v1/deployments", "t-deploy", create)
		mustStatus(t, r, 201)
		ids = append(ids, decode[struct{ ID string }](t, r).ID)
	}
	wg.Wait()
	for _, id := range ids { // gone with a load, or whole
		r := e.get("/v1/deployments/"+id, "t-deploy")
		if r.Status == 404 {
			continue
		}
		if d := decode[struct{ ID, Status string }](t, r); r.Status != 200 || d.ID != id || d.Status == "" {
			t.Fatalf("%s: %d %+v", id, r.Status, d)
		}
	}
	r := e.post("/v1/deployments", "t-deploy", create)
	mustStatus(t, r, 201)
	id := decode[struct{ ID string }](t, r).ID
	mustStatus(t, e.post("/_emulator/await", "", map[string]any{"deployment": id, "status": "ready", "timeout": "10s"}), 200)
}
