package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// A header given twice (-header "Vary: Origin" -header "Vary: Accept-Encoding", as the
// perf harness passes a header hostemu's answer carries several times) is written with
// both values, as hostemu writes it; other methods' answers are left alone.
func TestAnswerHeadersKeepEveryValue(t *testing.T) {
	var a answerHeaders
	for _, s := range []string{"Vary: Origin", "vary: Accept-Encoding", "X-Ratelimit-Limit: 100"} {
		if err := a.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Set("no colon"); err == nil {
		t.Fatal("a header without a colon was accepted")
	}
	h := a.around(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if got, want := w.Header()["Vary"], []string{"Origin", "Accept-Encoding"}; !slices.Equal(got, want) {
		t.Errorf("Vary = %q, want %q", got, want)
	}
	if got := w.Header().Get("X-Ratelimit-Limit"); got != "100" {
		t.Errorf("X-Ratelimit-Limit = %q", got)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", nil))
	if len(w.Header()) != 0 {
		t.Errorf("a POST's answer got %v", w.Header())
	}
}
