package emulator_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// A walk of a project's deployments while others are being created neither skips an
// item that existed when it began nor repeats one: the cursor holds the sort key.
func TestPaginationWalkDuringInserts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < 40; i++ {
		mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}}), 201)
		if i%3 == 0 {
			e.advance("1ms")
		}
	}
	before := map[string]bool{}
	for _, d := range decode[emulator.DeploymentList](t, e.get("/v1/deployments?project_id=prj_blog&limit=100", "t-read")).Deployments {
		before[d.ID] = true
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_blog", "files": map[string]string{}})
			}
		}()
	}
	seen := map[string]bool{}
	var last string
	cursor := ""
	for pages := 0; ; pages++ {
		path := "/v1/deployments?project_id=prj_blog&limit=7"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.get(path, "t-read")
		mustStatus(t, r, 200)
		m := decode[emulator.DeploymentList](t, r)
		for _, d := range m.Deployments {
			id := d.ID
			if seen[id] {
				t.Fatalf("%s seen twice", id)
			}
			seen[id] = true
			key := fmt.Sprintf("%020d|%s", time.Time(d.CreatedAt).UnixNano(), id)
			if last != "" && key >= last {
				t.Fatalf("order broken at %s", id)
			}
			last = key
		}
		if m.NextCursor == nil || *m.NextCursor == "" {
			break
		}
		cursor = *m.NextCursor
	}
	close(stop)
	wg.Wait()
	for id := range before {
		if !seen[id] {
			t.Errorf("%s existed before the walk and was skipped", id)
		}
	}
}
