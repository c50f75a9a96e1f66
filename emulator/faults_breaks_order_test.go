package emulator_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// breakOnce makes one request on a connection of its own (never a reused one, which Go
// would send again once reset), reading what comes.
func breakOnce(t *testing.T, url string) {
	t.Helper()
	r, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer t-read")
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(r)
	if err != nil {
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// A request whose connection a fault breaks (reset, drop, empty, truncate) is in the
// journal and counted by coverage before its client sees the break: a client that
// looks right after (an await, a test's coverage at its end, hostemu mutate) finds it.
// Each break is tried many times: the bookkeeping used to run after the connection was
// closed, and a client's next look could come first.
func TestBrokenRequestRecordedBeforeTheClientSeesIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, f := range []map[string]any{
		{"break": "reset"},
		{"drop": true},
		{"break": "empty"},
		{"break": "truncate", "after_bytes": 5},
	} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			e.clearFaults(t)
			mustStatus(t, e.do(req{Method: "POST", Path: "/_emulator/reset"}), 200)
			f["match"] = map[string]any{"method": "GET", "path": "/v1/projects"}
			e.addFault(t, f)
			for i := range 30 {
				breakOnce(t, e.url+"/v1/projects")
				var got struct {
					Requests []json.RawMessage `json:"requests"`
				}
				r := e.do(req{Method: "GET", Path: "/_emulator/requests?path=/v1/projects"})
				if err := json.Unmarshal(r.Body, &got); err != nil {
					t.Fatal(err)
				}
				if len(got.Requests) != i+1 {
					t.Fatalf("after %d broken requests the journal holds %d", i+1, len(got.Requests))
				}
				var cov struct {
					Operations []struct {
						Method, Path string
						Seen         int
					} `json:"operations"`
				}
				if err := json.Unmarshal(e.do(req{Method: "GET", Path: "/_emulator/coverage"}).Body, &cov); err != nil {
					t.Fatal(err)
				}
				seen := -1
				for _, o := range cov.Operations {
					if o.Method == "GET" && o.Path == "/v1/projects" {
						seen = o.Seen
					}
				}
				if seen < i+1 {
					t.Fatalf("after %d broken requests coverage saw %d", i+1, seen)
				}
			}
			mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/coverage"}), 200)
		})
	}
}
