package emulator_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// h2cClient speaks HTTP/2 with prior knowledge over cleartext, as
// curl --http2-prior-knowledge and gRPC-style clients do.
func h2cClient(t testing.TB) *http.Client {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func h2cDo(t testing.TB, c *http.Client, method, url, token string) (*http.Response, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(r)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// TestH2C: a server from Listen answers HTTP/2 cleartext with prior knowledge on every
// kind of route, and a drop fault resets the stream (HTTP/2 cannot hijack) without
// breaking the connection, journaled as dropped.
func TestH2C(t *testing.T) {
	t.Parallel()
	srv, e := listenEnv(t, emulator.Limits{})
	c := h2cClient(t)
	for _, tt := range []struct {
		method, path, token string
		status              int
	}{
		{"GET", "/_emulator/health", "", 200},
		{"HEAD", "/_emulator/health", "", 200},
		{"GET", "/v1/projects", "t-read", 200},
		{"GET", "/v1/projects", "", 401},
		{"GET", "/docs/errors", "", 200},
	} {
		res, body, err := h2cDo(t, c, tt.method, srv.URL()+tt.path, tt.token)
		if err != nil {
			t.Fatalf("%s %s over h2c: %v", tt.method, tt.path, err)
		}
		if res.ProtoMajor != 2 || res.StatusCode != tt.status {
			t.Errorf("%s %s: %s %d, want HTTP/2 %d: %s", tt.method, tt.path, res.Proto, res.StatusCode, tt.status, body)
		}
	}

	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/deployments"}, "drop": true}), 201)
	if res, _, err := h2cDo(t, c, "GET", srv.URL()+"/v1/deployments", "t-read"); err == nil {
		t.Errorf("drop over HTTP/2 was answered %d", res.StatusCode)
	}
	res, body, err := h2cDo(t, c, "GET", srv.URL()+"/v1/projects", "t-read")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("after a dropped stream: %v %v %s", res, err, body)
	}
	es := e.get("/_emulator/requests?path=/v1/deployments", "").JSON(t)["requests"].([]any)
	if len(es) != 1 {
		t.Fatalf("journal: %v", es)
	}
	if got := es[0].(map[string]any); got["status"] != float64(0) || got["error_code"] != "dropped" {
		t.Errorf("dropped request journaled as %v", got)
	}
}
