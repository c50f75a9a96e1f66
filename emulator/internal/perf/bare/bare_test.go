package bare

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// POST /_reset takes the reference back to its start, as hostemu's POST
// /_emulator/reset does: the deployments gone, the same ids drawn again; it takes the
// deploy token.
func TestResetStartsAgain(t *testing.T) {
	h := New(nil)
	send := func(method, path, token, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	create := func() string {
		t.Helper()
		w := send("POST", "/v1/deployments", DeployToken, `{"project_id":"`+Project+`","files":{}}`)
		var v struct{ ID string }
		if w.Code != http.StatusCreated || json.Unmarshal(w.Body.Bytes(), &v) != nil {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
		return v.ID
	}
	first := create()
	if second := create(); second == first {
		t.Fatalf("two creates drew the same id %s", first)
	}
	if w := send("POST", "/_reset", ReadToken, ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("reset with the read token: %d", w.Code)
	}
	if w := send("POST", "/_reset", DeployToken, ""); w.Code != http.StatusOK {
		t.Fatalf("reset: %d %s", w.Code, w.Body)
	}
	if again := create(); again != first {
		t.Errorf("after a reset the first create drew %s, want %s", again, first)
	}
}

// Given ids, the GET answers the body for an id among them and 404 for any other;
// without, it answers the body for any id (the fixed-bytes reference as before).
func TestGetFindsItsID(t *testing.T) {
	get := func(h http.Handler, id string) int {
		req := httptest.NewRequest("GET", "/v1/deployments/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+ReadToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusOK && w.Body.String() != "{}" {
			t.Errorf("GET %s answered %q", id, w.Body)
		}
		return w.Code
	}
	h := NewGet([]byte("{}"), nil, []string{"dpl_a", "dpl_b"})
	if c := get(h, "dpl_b"); c != http.StatusOK {
		t.Errorf("a known id: %d", c)
	}
	if c := get(h, "dpl_c"); c != http.StatusNotFound {
		t.Errorf("an unknown id: %d", c)
	}
	if c := get(New([]byte("{}")), "dpl_c"); c != http.StatusOK {
		t.Errorf("no ids: %d", c)
	}
}

// The start's reference answers /_emulator/health as hostemu does once it listens,
// with no token.
func TestHealthAnswersAtOnce(t *testing.T) {
	w := httptest.NewRecorder()
	NewGet([]byte("{}"), nil, nil).ServeHTTP(w, httptest.NewRequest("GET", "/_emulator/health", nil))
	if w.Code != http.StatusOK || w.Body.String() != `{"status":"ok"}` {
		t.Fatalf("GET /_emulator/health: %d %q", w.Code, w.Body)
	}
}
