package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// A handler that panics answers 500 internal_error in the envelope, with rate-limit
// headers, and the journal records the 500.
func TestPanicIsA500InTheEnvelope(t *testing.T) {
	a := newTestAPI(t)
	w := a.w
	a.publicRoute(a.engine, "GET", "/v1/boom", a.need(state.ScopeRead), func(*gin.Context) (any, error) { panic("boom") })

	r := httptest.NewRequest("GET", "/v1/boom", nil)
	r.Header.Set("Authorization", "Bearer t")
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, r)
	var body struct {
		Error struct{ Code, Message, DocURL string }
	}
	json.Unmarshal(rec.Body.Bytes(), &body)
	//lint:ignore SA1008 hostemu writes the header as the spec spells it, on purpose
	if rec.Code != 500 || body.Error.Code != "internal_error" || rec.Header().Get("X-RateLimit-Limit") == "" {
		t.Fatalf("panic answered %d %s %v", rec.Code, rec.Body, rec.Header())
	}
	es := w.Requests(journal.Filter{Path: "/v1/boom"})
	if len(es) != 1 || es[0].Status != 500 || es[0].ErrorCode != "internal_error" {
		t.Fatalf("journal %+v", es)
	}
}

// newTestAPI serves a world holding one read token, "t".
func newTestAPI(t *testing.T) *API {
	t.Helper()
	reg, err := scenario.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	w, err := world.New(world.Config{Scenarios: reg, Fixtures: func() (state.Snapshot, error) {
		return state.Snapshot{Tokens: []state.Token{{Token: "t", Scope: state.ScopeRead}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return New(w, Config{})
}
