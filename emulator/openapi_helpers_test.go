package emulator_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/openapi"
	"github.com/hostemu/hostemu/emulator/internal/openapi/openapitest"
)

// describedBy is the description that covers a request to hostemu's own host, and the
// request's path as it names it, or nil (the dashboard, the docs pages, a deployment
// host). The control description names a namespace's routes once, relative to its
// second server, /_emulator/namespaces/{ns}: they are checked as the default world's.
func describedBy(r req) (*openapi.Doc, string) {
	if r.Host != "" {
		return nil, "" // the edge, or a Host header under test
	}
	switch {
	case strings.HasPrefix(r.Path, "/v1/"), strings.HasPrefix(r.Path, "/openapi."):
		return openapi.Hosting(), r.Path
	case strings.HasPrefix(r.Path, "/_emulator/"):
		if rest, ok := strings.CutPrefix(r.Path, "/_emulator/namespaces/"); ok {
			if _, inside, ok := strings.Cut(rest, "/"); ok && inside != "" {
				return openapi.Control(), "/_emulator/" + inside
			}
		}
		return openapi.Control(), r.Path
	}
	return nil, ""
}

// mayChangeAnswers reports whether a request can make later answers differ from what
// their operations list: a fault added, a scenario made active (its faults), a
// namespace created with a scenario. From then on, any status the shared default
// response allows is accepted.
func mayChangeAnswers(method, path string, body []byte) bool {
	if method == http.MethodGet || !strings.HasPrefix(path, "/_emulator/") {
		return false
	}
	return strings.Contains(path, "/faults") || strings.HasSuffix(path, "/scenarios/active") ||
		(strings.HasSuffix(path, "/namespaces") && strings.Contains(string(body), `"scenario"`))
}

// checkDescribed holds one request made by a black-box helper and its answer to the
// OpenAPI description that covers it (openapitest.Check), failing the test on any
// difference. HEAD (no body to check) and CORS preflights are left out.
func (e *env) checkDescribed(t testing.TB, r req, sent *http.Request, body []byte, got resp) {
	t.Helper()
	if mayChangeAnswers(r.Method, r.Path, body) {
		e.faulted.Store(true)
	}
	doc, path := describedBy(r)
	if doc == nil || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return
	}
	v, err := openapitest.For(doc)
	if err != nil {
		t.Fatalf("OpenAPI validator: %v", err)
	}
	for _, p := range v.Check(openapitest.Exchange{Method: r.Method, Path: path, Header: sent.Header, Body: body,
		Status: got.Status, RespHeader: got.Header, RespBody: got.Body, Faulted: e.faulted.Load()}) {
		t.Errorf("OpenAPI: %s", p)
	}
}

// newDoubleEnv is newEnv with the emulator's handler wrapped: a test double of hostemu
// that answers as wrap makes it.
func newDoubleEnv(t testing.TB, wrap func(http.Handler) http.Handler) *env {
	t.Helper()
	e, err := emulator.New(emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart})
	if err != nil {
		t.Fatalf("emulator.New: %v", err)
	}
	srv := httptest.NewServer(wrap(e.Handler()))
	t.Cleanup(func() { srv.Close(); e.Close() })
	return &env{t: t, emu: e, url: srv.URL}
}
