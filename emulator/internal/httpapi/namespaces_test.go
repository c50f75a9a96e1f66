package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// Without a namespace registry (Config.Namespaces nil) the namespace routes are not
// there: 404 not_found in the envelope, not a 500 from a nil registry.
func TestNoRegistryNoNamespaceRoutes(t *testing.T) {
	a := newTestAPI(t)
	for _, m := range []string{"GET /_emulator/namespaces", "POST /_emulator/namespaces", "DELETE /_emulator/namespaces/ns_x", "GET /_emulator/namespaces/ns_x/clock"} {
		method, path, _ := strings.Cut(m, " ")
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		var body struct {
			Error struct {
				Code   string
				DocURL string `json:"doc_url"`
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 404 || body.Error.Code != "not_found" || body.Error.DocURL == "" {
			t.Errorf("%s: %d %s", m, rec.Code, rec.Body)
		}
	}
}
