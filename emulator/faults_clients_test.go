package emulator_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Faults as the clients users write meet them (issue 34): a retrying client of the Go
// ecosystem, go-retryablehttp, honours the Retry-After of an injected
// service_unavailable and gets through; Go's http.Client reads a truncated body to
// io.ErrUnexpectedEOF and a malformed one to a JSON syntax error (TestFaultBreaks).
// Node's fetch, and ky, are checked in npm/faults_clients_test.go.

// go-retryablehttp's default policy retries a 503, waiting the answer's Retry-After
// (its DefaultBackoff reads it on 429 and 503): two injected service_unavailable
// answers with Retry-After 1, then the real one, in about two seconds where the
// client's own backoff would have waited 20 ms.
func TestFaultRetryableHTTPHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addFault(t, map[string]any{"match": map[string]any{"operation": "listProjects"}, "error": "service_unavailable", "times": 2})
	c := retryablehttp.NewClient()
	c.Logger = nil
	c.RetryMax = 3
	c.RetryWaitMin, c.RetryWaitMax = 10*time.Millisecond, 10*time.Millisecond // its own backoff: 10 ms
	var seen []string
	c.ResponseLogHook = func(_ retryablehttp.Logger, res *http.Response) {
		seen = append(seen, res.Status[:3]+" Retry-After:"+res.Header.Get("Retry-After"))
	}
	req, err := retryablehttp.NewRequest("GET", e.url+"/v1/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t-read")
	start := time.Now()
	res, err := c.Do(req)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("after %v: %v (seen %v)", took, err, seen)
	}
	defer res.Body.Close()
	var page struct {
		Projects []json.RawMessage `json:"projects"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil || res.StatusCode != 200 || len(page.Projects) == 0 {
		t.Fatalf("%d %v %v", res.StatusCode, page, err)
	}
	t.Logf("go-retryablehttp: %v in %v", seen, took.Round(time.Millisecond))
	if strings.Join(seen, ",") != "503 Retry-After:1,503 Retry-After:1,200 Retry-After:" || took < 1900*time.Millisecond {
		t.Fatalf("seen %v in %v, want two 503s with Retry-After 1, then 200, after two seconds", seen, took)
	}
}
