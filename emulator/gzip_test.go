package emulator_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("answer is not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("answer is not gzip: %v", err)
	}
	return out
}

// TestGzipResponses: answers of 1400 bytes or more are gzipped when Accept-Encoding
// allows it (streamed ones too); small ones, HEAD, and clients that do not ask are
// answered as they are; every answer varies by Accept-Encoding.
func TestGzipResponses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		method, path, token, accept string
		gzipped                     bool
	}{
		{"GET", "/docs/errors", "", "gzip", true},
		{"GET", "/docs/errors", "", "gzip;q=0", false},
		{"GET", "/docs/errors", "", "identity", false},
		{"GET", "/docs/errors", "", "br, gzip;q=0.5", true},
		{"HEAD", "/docs/errors", "", "gzip", false},
		{"GET", "/_emulator/state", "", "gzip", true}, // streamed
		{"GET", "/v1/deployments?limit=100", "t-read", "gzip", true},
		{"GET", "/_emulator/health", "", "gzip", false}, // tiny
		{"GET", "/v1/projects", "", "gzip", false},      // a small error
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.accept, func(t *testing.T) {
			r := e.do(req{Method: tt.method, Path: tt.path, Token: tt.token, Headers: map[string]string{"Accept-Encoding": tt.accept}})
			if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary: %q", r.Header.Get("Vary"))
			}
			if got := r.Header.Get("Content-Encoding") == "gzip"; got != tt.gzipped {
				t.Fatalf("gzipped %v, want %v (%d bytes)", got, tt.gzipped, len(r.Body))
			}
			if !tt.gzipped {
				return
			}
			plain := e.do(req{Method: tt.method, Path: tt.path, Token: tt.token, Headers: map[string]string{"Accept-Encoding": "identity"}})
			if got := gunzip(t, r.Body); !bytes.Equal(got, plain.Body) && !strings.HasPrefix(tt.path, "/v1/") && !strings.HasPrefix(tt.path, "/_emulator/state") {
				t.Errorf("decoded answer differs from the plain one")
			}
			if len(plain.Body) < 1400 || len(r.Body) >= len(plain.Body) {
				t.Errorf("plain %d bytes, gzipped %d", len(plain.Body), len(r.Body))
			}
			if r.Header.Get("Content-Type") != plain.Header.Get("Content-Type") {
				t.Errorf("Content-Type %q, plain %q", r.Header.Get("Content-Type"), plain.Header.Get("Content-Type"))
			}
		})
	}
}

// TestGzipRequests: a gzip body is decoded (and journaled decoded); the size limit and
// the budget of bytes in flight apply to the decoded bytes, so a gzip bomb is 413;
// a corrupt one is 400 and other codings 415.
func TestGzipRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Limits.MaxBodyBytesInFlight = 64 << 10 })
	roomy := newEnv(t) // the default budget: the bomb meets the size limit first
	const deploy = `{"project_id":"prj_shop","files":{}}`
	big := `{"project_id":"prj_shop","files":{},"padding":"` + strings.Repeat("x", 512<<10) + `"}`
	bomb := `{"project_id":"prj_shop","files":{},"padding":"` + strings.Repeat("x", 8<<20) + `"}`
	tests := []struct {
		name, encoding string
		body           []byte
		status         int
		code           string
		roomy          bool
	}{
		{"gzip", "gzip", gzipped(t, deploy), 201, "", false},
		{"x-gzip", "x-gzip", gzipped(t, deploy), 201, "", false},
		{"identity", "identity", []byte(deploy), 201, "", false},
		{"bomb", "gzip", gzipped(t, bomb), 413, "payload_too_large", true},
		// alone over the whole budget: it can never be taken, so no "retry in a second"
		{"over the budget once decoded", "gzip", gzipped(t, big), 413, "payload_too_large", false},
		{"corrupt", "gzip", []byte("not gzip at all"), 400, "invalid_request", false},
		{"truncated", "gzip", gzipped(t, deploy)[:20], 400, "invalid_request", false},
		{"brotli", "br", []byte(deploy), 415, "unsupported_media_type", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.body) > 16<<10 {
				t.Fatalf("the encoded body is %d bytes: over the budget's free part, it tests nothing", len(tt.body))
			}
			env := e
			if tt.roomy {
				env = roomy
			}
			r := env.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: tt.body, Headers: map[string]string{"Content-Encoding": tt.encoding}})
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("%d %q, want %d %q: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}

	t.Run("journaled decoded", func(t *testing.T) {
		mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
		mustStatus(t, e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: gzipped(t, deploy), Headers: map[string]string{"Content-Encoding": "gzip"}}), 201)
		es := e.get("/_emulator/requests", "").JSON(t)["requests"].([]any)
		if got := es[0].(map[string]any)["body"]; got != deploy {
			t.Errorf("journaled body %q", got)
		}
	})

	t.Run("state import", func(t *testing.T) {
		state := e.get("/_emulator/state", "")
		mustStatus(t, state, 200)
		r := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: gzipped(t, string(state.Body)), Headers: map[string]string{"Content-Encoding": "gzip"}})
		mustStatus(t, r, 200)
		r = e.do(req{Method: "PUT", Path: "/_emulator/state", Body: state.Body, Headers: map[string]string{"Content-Encoding": "zstd"}})
		if r.Status != 415 || r.Code() != "unsupported_media_type" {
			t.Errorf("zstd state: %d %s", r.Status, r.Body)
		}
	})
}
