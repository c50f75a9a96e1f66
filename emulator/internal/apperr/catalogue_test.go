package apperr_test

import (
	"slices"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// A fault of only a status answers the first "any" code of that status in Catalogue's
// order, by code (400: invalid_json, as httpapi's codeForStatus answered before it moved
// here), else the status text in snake_case, else client_error or server_error.
func TestForStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{
		400: "invalid_json", 401: "invalid_token", 404: "not_found", 405: "method_not_allowed",
		408: "request_timeout", 418: "im_a_teapot", 429: "rate_limited", 500: "internal_error",
		502: "bad_gateway", 503: "service_unavailable", 499: "client_error", 599: "server_error",
	} {
		if got := apperr.ForStatus(status); got != want {
			t.Errorf("ForStatus(%d) = %q, want %q", status, got, want)
		}
	}
}

// AnswerCodes hold every catalogue code, every status's code, dropped and timeout,
// each once.
func TestAnswerCodes(t *testing.T) {
	t.Parallel()
	codes := apperr.AnswerCodes()
	want := []string{"dropped", "timeout"}
	for _, d := range apperr.Catalogue() {
		want = append(want, string(d.Code))
	}
	for status := 400; status <= 599; status++ {
		want = append(want, apperr.ForStatus(status))
	}
	for _, c := range want {
		if !slices.Contains(codes, c) {
			t.Errorf("AnswerCodes lacks %q", c)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(codes)))) != len(codes) {
		t.Errorf("AnswerCodes repeat a code: %v", codes)
	}
}

// A CodeSet keeps each code once, in the order first added, and never "".
func TestCodeSet(t *testing.T) {
	t.Parallel()
	var s apperr.CodeSet
	for _, c := range []string{"b", "", "a", "b", "a", "c", ""} {
		s.Add(c)
	}
	if got := s.List(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("%v", got)
	}
}
