package edge_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// TestPromoteUnderLoad: parallel readers of a custom domain over loopback while another
// goroutine promotes and rolls back hundreds of times. Every answer is a 200 whose body
// comes whole from the deployment named in X-Hostemu-Deployment, and each promote is
// seen by the next request made after it.
func TestPromoteUnderLoad(t *testing.T) {
	t.Parallel()
	const (
		versions = 4
		swaps    = 400
		readers  = 8
	)
	files := edge.NewFileStore(0)
	world := newFakeWorld()
	world.domains["shop.example.test"] = fakeDomain{status: state.StatusActive, project: "shop"}
	deps := make([]edge.Deployment, versions)
	for i := range deps {
		id := fmt.Sprintf("dpl_v%d", i)
		deps[i] = edge.Deployment{ID: id, Status: state.StatusReady, EverReady: true, Files: map[string]string{
			"index.html": mustPut(t, files, strings.Repeat("<p>"+id+"</p>\n", 200)),
			"app.js":     mustPut(t, files, "console.log('"+id+"')"),
		}}
	}
	world.promote("shop", deps[0])
	prod := world.production["shop"]

	srv := httptest.NewUnstartedServer(newHandler(t, world, files))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	client := srv.Client()

	get := func(path string) (id, body string, err error) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Host = "shop.example.test"
		resp, err := client.Do(req)
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", "", err
		}
		if resp.StatusCode != 200 {
			return "", "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		return resp.Header.Get("X-Hostemu-Deployment"), string(b), nil
	}
	whole := func(id, path, body string) bool {
		switch path {
		case "/":
			return body == strings.Repeat("<p>"+id+"</p>\n", 200)
		default:
			return body == "console.log('"+id+"')"
		}
	}

	var (
		done     atomic.Bool
		requests atomic.Int64
		wg       sync.WaitGroup
		seenMu   sync.Mutex
		seen     = map[string]int{}
	)
	for r := range readers {
		wg.Go(func() {
			path := []string{"/", "/app.js"}[r%2]
			for !done.Load() {
				id, body, err := get(path)
				requests.Add(1)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				if !whole(id, path, body) {
					t.Errorf("reader %d: body of %s not from %q: %.60q", r, path, id, body)
					return
				}
				seenMu.Lock()
				seen[id]++
				seenMu.Unlock()
			}
		})
	}
	for i := 1; i <= swaps && !t.Failed(); i++ {
		next := deps[i%versions]
		prod.Store(&next) // promote, or roll back to an earlier one
		if id, _, err := get("/"); err != nil || id != next.ID {
			t.Errorf("swap %d: the next request got %q (%v), want %s", i, id, err, next.ID)
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d reader requests, by deployment %v", swaps, requests.Load(), seen)
}
