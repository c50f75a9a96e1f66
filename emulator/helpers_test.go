package emulator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// testStart is the manual clock's start in every test world.
var testStart = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// env is one emulator behind a loopback HTTP server, for black-box tests.
type env struct {
	t   testing.TB
	emu *emulator.Emulator
	url string
	// faulted is set once a fault or scenario may have changed answers (checkDescribed);
	// atomic: parallel subtests share an env
	faulted atomic.Bool
}

// newEnv starts an emulator on the test fixtures with a manual clock; opts may change it.
func newEnv(t testing.TB, opts ...func(*emulator.Options)) *env {
	t.Helper()
	o := emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart}
	for _, f := range opts {
		f(&o)
	}
	e, err := emulator.New(o)
	if err != nil {
		t.Fatalf("emulator.New: %v", err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	out := &env{t: t, emu: e, url: srv.URL}
	out.faulted.Store(o.Scenario != "")
	return out
}

// resp is an answered request.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value. Tests that read fields decode into the
// typed views instead (decode); JSON is for checking the raw shape on purpose.
func (r resp) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Code is the error code of an error envelope ("" when the body is not one).
func (r resp) Code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// decode reads r's body as a T (one of the views emulator exports, or a test-local
// struct where the product has no type), failing the test on a body that is not JSON of
// that shape. It also holds every time in the body to the one way hostemu writes times
// (RFC 3339 UTC, three fractional digits), so a test that compares decoded times
// compares what was written, not just the instant.
func decode[T any](t testing.TB, r resp) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not a %T: %v: %.300s", v, err, r.Body)
	}
	var raw any
	json.Unmarshal(r.Body, &raw)
	checkTimes(t, "", raw)
	return v
}

// checkTimes fails the test on a time (the value of a key named now or time, or ending
// in _at) that is not written as hostemu writes times.
func checkTimes(t testing.TB, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := strings.TrimPrefix(path+"."+k, ".")
			if s, ok := x.(string); ok && (k == "now" || k == "time" || strings.HasSuffix(k, "_at")) {
				if !threeDigits.MatchString(s) {
					t.Errorf("%s = %q, want RFC 3339 UTC with three fractional digits", p, s)
				}
				continue
			}
			checkTimes(t, p, x)
		}
	case []any:
		for _, x := range v {
			checkTimes(t, path, x)
		}
	}
}

// apiError is the object of an error envelope ({"error": {...}}), which has no exported
// product type.
type apiError struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	DocURL  string   `json:"doc_url"`
	Missing []string `json:"missing"`
}

// Err is the error object of r's body, failing the test when the body is not an error
// envelope.
func (r resp) Err(t testing.TB) apiError {
	t.Helper()
	env := decode[struct {
		Error *apiError `json:"error"`
	}](t, r)
	if env.Error == nil {
		t.Fatalf("not an error envelope: %d %.300s", r.Status, r.Body)
	}
	return *env.Error
}

// req is a request to make: body may be a string (sent as is) or a value (as JSON).
type req struct {
	Method  string
	Path    string
	Token   string
	Body    any
	Headers map[string]string
	Host    string // the Host header, when not the server's address
}

func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader
	var sent []byte // the body, for checkDescribed
	switch b := r.Body.(type) {
	case nil:
	case string:
		body, sent = strings.NewReader(b), []byte(b)
	case []byte:
		body, sent = bytes.NewReader(b), b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		body, sent = bytes.NewReader(j), j
	}
	hr, err := http.NewRequest(r.Method, e.url+r.Path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.Host != "" {
		hr.Host = r.Host
	}
	if r.Token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Headers {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	res, err := noRedirects.Do(hr)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Header: res.Header, Body: b}
	e.checkDescribed(e.t, r, hr, sent, out)
	return out
}

// noRedirects is a client that shows a redirect rather than following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (e *env) get(path, token string) resp { return e.do(req{Method: "GET", Path: path, Token: token}) }

func (e *env) post(path, token string, body any) resp {
	return e.do(req{Method: "POST", Path: path, Token: token, Body: body})
}

// mustStatus fails unless r has status want.
func mustStatus(t testing.TB, r resp, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
}

// advance moves the manual clock.
func (e *env) advance(by string) {
	e.t.Helper()
	mustStatus(e.t, e.post("/_emulator/clock/advance", "", map[string]string{"by": by}), 200)
}

const sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func asConfigError(err error, target **emulator.ConfigError) bool { return errors.As(err, target) }

// orNull is *s, or "null" when s is nil: a nullable string field, to compare and print.
func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// The control API's answers that have no exported product type (the HTTP layer builds
// them from unexported structs), as the tests read them.
type (
	// health is GET /_emulator/health.
	health struct {
		Status   string             `json:"status"`
		Version  string             `json:"version"`
		Scenario string             `json:"scenario"`
		Clock    string             `json:"clock"`
		Now      emulator.Timestamp `json:"now"`
	}
	// faultView is a fault as POST /_emulator/faults answers it and GET lists it.
	faultView struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Hits   int64  `json:"hits"`
		emulator.FaultSpec
	}
	// faultList is GET /_emulator/faults.
	faultList struct {
		Faults []faultView `json:"faults"`
	}
	// journalPage is GET /_emulator/requests.
	journalPage struct {
		Requests []emulator.JournalEntry `json:"requests"`
	}
	// scenarioList is GET /_emulator/scenarios.
	scenarioList struct {
		Active    string `json:"active"`
		Scenarios []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Source      string `json:"source"`
			Deleted     bool   `json:"deleted"`
		} `json:"scenarios"`
		Errors []struct {
			File  string `json:"file"`
			Line  int    `json:"line"`
			Error string `json:"error"`
		} `json:"errors"`
	}
)
