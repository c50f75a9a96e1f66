package emulator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// TestExpectContinueRefusedAtOnce: a request that sends Expect: 100-continue and is
// refused before its handler reads the body gets its final answer at once, never a
// 100 Continue, without sending the body; the journal says the body was not read. A
// request that is accepted still gets its 100 Continue.
func TestExpectContinueRefusedAtOnce(t *testing.T) {
	t.Parallel()
	// a body read that waits for a body never sent would hold the answer for a minute,
	// well past each connection's deadline below
	srv, e := listenEnv(t, emulator.Limits{BodyReadTimeout: time.Minute})
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/decrypt"}, "status": 503}), 201)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"path": "/v1/projects/*/domains"}, "rate_limit": true}), 201)
	const body = `{"project_id":"prj_shop","files":{}}`
	tests := []struct {
		name, path, headers string
		length              int
		status              int
		code                string
	}{
		{"missing token", "/v1/deployments", "Content-Type: application/json\r\n", len(body), 401, "missing_token"},
		{"bad token", "/v1/deployments", "Authorization: Bearer nope\r\nContent-Type: application/json\r\n", len(body), 401, "invalid_token"},
		{"wrong scope", "/v1/deployments", "Authorization: Bearer t-read\r\nContent-Type: application/json\r\n", len(body), 403, "insufficient_scope"},
		{"rate limited", "/v1/projects/prj_shop/domains", "Authorization: Bearer t-admin\r\nContent-Type: application/json\r\n", len(body), 429, "rate_limited"},
		{"fault", "/v1/decrypt", "Authorization: Bearer t-cipher\r\nContent-Type: application/json\r\n", len(body), 503, "service_unavailable"},
		{"wrong content type", "/v1/deployments", "Authorization: Bearer t-deploy\r\nContent-Type: text/plain\r\n", len(body), 415, "unsupported_media_type"},
		{"unsupported encoding", "/v1/deployments", "Authorization: Bearer t-deploy\r\nContent-Type: application/json\r\nContent-Encoding: br\r\n", len(body), 415, "unsupported_media_type"},
		{"declared too large", "/v1/deployments", "Authorization: Bearer t-deploy\r\nContent-Type: application/json\r\n", 2 << 20, 413, "payload_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/requests"}), 200)
			c := dial(t, srv)
			c.SetDeadline(time.Now().Add(5 * time.Second)) // curl waits 1 s; a minute means the body was waited for
			c.send(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", tt.path, tt.headers, tt.length))
			r := c.response() // the first answer: a 100 Continue here would be the bug
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("first answer %d %q, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
			es := e.get("/_emulator/requests", "").JSON(t)["requests"].([]any)
			if len(es) != 1 {
				t.Fatalf("journal: %v", es)
			}
			if got := es[0].(map[string]any); got["body"] != "" || got["body_unread"] != true {
				t.Errorf("journal entry %v: want body \"\" and body_unread", got)
			}
		})
	}

	t.Run("accepted request still continues", func(t *testing.T) {
		c := dial(t, srv)
		c.send(fmt.Sprintf("POST /v1/deployments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t-deploy\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body)))
		if r := c.response(); r.Status != 100 {
			t.Fatalf("first answer %d, want 100 Continue", r.Status)
		}
		c.send(body)
		if r := c.response(); r.Status != 201 {
			t.Fatalf("after the body: %d %s", r.Status, r.Body)
		}
		es := e.get("/_emulator/requests?method=POST&path=/v1/deployments", "").JSON(t)["requests"].([]any)
		if got := es[len(es)-1].(map[string]any); !strings.Contains(got["body"].(string), "prj_shop") || got["body_unread"] != nil {
			t.Errorf("journal entry %v", got)
		}
	})
}
