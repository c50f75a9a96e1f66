package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Faults are added, removed and cleared, requests fired and faults listed with their
// near misses, all at once, in the default world and a namespace: every listing is
// whole (a fault with hits has no near misses, one without has a list), and -race
// finds nothing shared unguarded.
func TestNearMissesWhileFaultsChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.newNamespace(t, nil)
	client := &http.Client{}
	send := func(method, url, token string, body any) (int, []byte) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		r, _ := http.NewRequest(method, url, rd)
		if body != nil {
			r.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(r)
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	type world struct{ faults, token string }
	worlds := []world{{e.url + "/_emulator/faults", "t-read"}, {e.url + ns.control("/faults"), ns.Tokens.Read}}
	var wg sync.WaitGroup
	for _, w := range worlds {
		wg.Go(func() { // faults that almost match, added and removed
			for i := range 40 {
				code, b := send("POST", w.faults, "", map[string]any{"match": map[string]any{"method": "DELETE", "path": "/v1/projects", "headers": map[string]string{"X-I": fmt.Sprint(i)}}, "status": 503})
				if code != 201 {
					t.Errorf("add: %d %s", code, b)
					return
				}
				var f struct{ ID string }
				json.Unmarshal(b, &f)
				if i%3 == 0 {
					send("DELETE", w.faults+"/"+f.ID, "", nil)
				}
				if i%17 == 16 {
					send("DELETE", w.faults, "", nil)
				}
			}
		})
		wg.Go(func() { // a fault that fires now and then
			for range 40 {
				send("POST", w.faults, "", map[string]any{"match": map[string]any{"method": "GET", "path": "/v1/projects", "query": map[string]string{"x": "1"}}, "status": 503, "times": 1})
			}
		})
		wg.Go(func() { // requests
			for i := range 80 {
				send("GET", e.url+fmt.Sprintf("/v1/projects?x=%d", i%2), w.token, nil)
			}
		})
		wg.Go(func() { // listings
			for range 40 {
				code, b := send("GET", w.faults, "", nil)
				var l struct {
					Faults []struct {
						ID         string
						Hits       int64
						NearMisses *[]json.RawMessage `json:"near_misses"`
					}
				}
				if err := json.Unmarshal(b, &l); code != 200 || err != nil {
					t.Errorf("list: %d %v %s", code, err, b)
					return
				}
				for _, f := range l.Faults {
					if (f.Hits > 0) != (f.NearMisses == nil) {
						t.Errorf("%s: %d hits, near misses %v", f.ID, f.Hits, f.NearMisses)
					}
				}
			}
		})
	}
	wg.Wait()
}
