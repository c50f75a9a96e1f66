package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
)

// A request's debug log line names what a CI log collector matches it to a test by: the
// route that answered, the namespace (none here: the default world), the status and the
// error code; never the token.
func TestRequestLogLine(t *testing.T) {
	var buf bytes.Buffer
	a := newDoorTestAPI(t, Config{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	r := httptest.NewRequest("GET", "/v1/deployments/nope", nil)
	r.Host = "127.0.0.1:4700"
	r.Header.Set("Authorization", "Bearer t")
	a.Handler().ServeHTTP(httptest.NewRecorder(), r)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log: %v %s", err, buf.Bytes())
	}
	for k, want := range map[string]any{"msg": "request", "route": "/v1/deployments/:id", "namespace": "", "status": 404.0,
		"error_code": "deployment_not_found", "service": "hosting", "scope": "read"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v (line %s)", k, line[k], want, buf.Bytes())
		}
	}
	if bytes.Contains(buf.Bytes(), []byte("Bearer")) {
		t.Errorf("the log holds the token: %s", buf.Bytes())
	}
}
