package journal_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// Issue 33 item 7: the journal keeps the answer: its status, the headers a client acts
// on, and its body within the request body's bound, copied off the caller's buffer.
func TestResponseKept(t *testing.T) {
	t.Parallel()
	j := journal.New(4)
	buf := []byte(`{"error":{"code":"rate_limited"}}`)
	h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {"30"}, "X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Limit": {"100"}, "Vary": {"Accept-Encoding"}, "Set-Cookie": {"s=1"}, "Date": {"x"}}
	e := journal.Entry{Method: "GET", Path: "/v1/projects", Status: 429}
	e.SetResponse(429, h, buf)
	got := j.Record(e)
	copy(buf, strings.Repeat("z", len(buf))) // the caller reuses its buffer
	r := j.List(journal.Filter{})[0].Response
	if r.Status != 429 || r.Body != `{"error":{"code":"rate_limited"}}` || r.BodyTruncated || got.Response.Body != r.Body {
		t.Errorf("response: %+v", r)
	}
	var names []string
	for _, x := range r.Headers {
		names = append(names, x.Name)
	}
	if strings.Join(names, " ") != "Content-Type Retry-After X-Ratelimit-Limit X-Ratelimit-Remaining" || r.Headers.Get("retry-after") != "30" {
		t.Errorf("answer headers kept: %v", r.Headers)
	}

	big := strings.Repeat("é", journal.MaxBody) // 2 bytes a rune: cut on a boundary
	e = journal.Entry{Method: "GET"}
	e.SetResponse(200, http.Header{"Location": {strings.Repeat("l", 5000)}}, []byte(big[:journal.MaxBody+1]))
	j.Add(e)
	r = j.List(journal.Filter{Since: 1})[0].Response
	if len(r.Body) > journal.MaxBody || !r.BodyTruncated || !strings.HasPrefix(big, r.Body) {
		t.Errorf("body of %d bytes, truncated %v", len(r.Body), r.BodyTruncated)
	}
	if n := len(r.Headers.Get("Location")) + len("Location"); n > journal.MaxAnswerHeaders || !r.HeadersTruncated {
		t.Errorf("headers of %d bytes, truncated %v", n, r.HeadersTruncated)
	}

	e = journal.Entry{Method: "GET", Status: 0, ErrorCode: "dropped"} // no answer
	j.Add(e)
	if r := j.List(journal.Filter{Since: 2})[0].Response; r.Status != 0 || r.Headers != nil || r.Body != "" {
		t.Errorf("a dropped request has a response: %+v", r)
	}
}

// An entry loaded from a bundle is held to the same bounds: its answer's body is cut,
// only the kept headers stay.
func TestResponseLoadedBounded(t *testing.T) {
	t.Parallel()
	j := journal.New(2)
	e := journal.Entry{Seq: 1, Method: "GET", Status: 200, Response: journal.Response{Status: 200, Body: strings.Repeat("b", 3*journal.MaxBody),
		Headers: journal.Headers{{Name: "Content-Type", Value: "text/html"}, {Name: "Server", Value: "x"}}}}
	if err := j.Load([]journal.Entry{e}); err != nil {
		t.Fatal(err)
	}
	r := j.List(journal.Filter{})[0].Response
	if len(r.Body) != journal.MaxBody || !r.BodyTruncated || len(r.Headers) != 1 || r.Headers.Get("content-type") != "text/html" {
		t.Errorf("loaded response: %d bytes (truncated %v), headers %v", len(r.Body), r.BodyTruncated, r.Headers)
	}
}

func TestHeaderMatch(t *testing.T) {
	t.Parallel()
	j := journal.New(10)
	for _, ra := range []string{"30", "1", ""} {
		e := journal.Entry{Method: "GET", Path: "/v1/projects"}
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
		if ra != "" {
			h["Retry-After"] = []string{ra}
		}
		e.SetRequestHeaders(http.Header{"User-Agent": {"curl/8.5"}, "Idempotency-Key": {ra}})
		e.SetResponse(200, h, nil)
		j.Add(e)
	}
	m := func(s string) *journal.HeaderMatch {
		hm, err := journal.ParseHeaderMatch(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return hm
	}
	for _, tt := range []struct {
		name string
		f    journal.Filter
		want int
	}{
		{"answer header there", journal.Filter{ResponseHeader: m("Retry-After")}, 2},
		{"answer header value, any case", journal.Filter{ResponseHeader: m("retry-after: 30")}, 1},
		{"answer header glob", journal.Filter{ResponseHeader: m("Content-Type:application/json*")}, 3},
		{"answer header glob, case-sensitive value", journal.Filter{ResponseHeader: m("Content-Type:APPLICATION/*")}, 0},
		{"request header glob", journal.Filter{Header: m("User-Agent:curl/*")}, 3},
		{"request header, empty value", journal.Filter{Header: m("Idempotency-Key:")}, 1},
		{"both", journal.Filter{Header: m("Idempotency-Key:1"), ResponseHeader: m("Retry-After:1")}, 1},
		{"answer header not on the request", journal.Filter{Header: m("Retry-After")}, 0},
	} {
		if got := j.Count(tt.f); got != tt.want {
			t.Errorf("%s: %d entries, want %d", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"", ":30", "Retry After:1", "Bad\x00:x", strings.Repeat("x", journal.MaxHeaderMatch+1)} {
		if _, err := journal.ParseHeaderMatch(bad); err == nil {
			t.Errorf("ParseHeaderMatch(%q) accepted", bad)
		}
	}
}

func FuzzParseHeaderMatch(f *testing.F) {
	for _, s := range []string{"Retry-After", "Retry-After:30", "Content-Type:application/*", ":x", ""} {
		f.Add(s, "30")
	}
	f.Fuzz(func(t *testing.T, s, value string) {
		m, err := journal.ParseHeaderMatch(s)
		if err != nil {
			return
		}
		m.Matches(journal.Headers{{Name: "Retry-After", Value: value}}) // must not panic
		if m.String() != s {
			t.Fatalf("String() = %q, want %q", m.String(), s)
		}
	})
}

// A body given as never modified (SetSharedResponse: a rendered answer the API keeps
// for many requests) makes the same entry as SetResponse's copy of it, and is kept as
// it is, without a copy, when it is whole: at most MaxBody bytes. A longer one is cut
// and copied as SetResponse's.
func TestSharedResponseIsTheCopysEntry(t *testing.T) {
	t.Parallel()
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Vary": {"Accept-Encoding"},
		"X-Ratelimit-Limit": {"3000"}, "X-Ratelimit-Remaining": {"2999"}, "X-Ratelimit-Reset": {"1795712655"}}
	for _, n := range []int{0, 1, 896, journal.MaxBody, journal.MaxBody + 1, 3 * journal.MaxBody} {
		body := strings.Repeat("d", n)
		req := journal.Entry{Method: "GET", Path: "/v1/deployments/dpl_1", Status: 200, Service: "hosting", Body: "",
			Headers: journal.Headers{{Name: "Authorization", Value: journal.Redacted}}}
		copied, shared := req, req
		copied.SetResponse(200, h, []byte(body)[:min(n, journal.MaxBody+1)])
		shared.SetSharedResponse(200, h, body)
		a, b := journal.New(1).Record(copied), journal.New(1).Record(shared)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%d bytes: shared %+v, copied %+v", n, b.Response, a.Response)
		}
		if kept := unsafe.StringData(b.Response.Body); n > 0 && n <= journal.MaxBody && kept != unsafe.StringData(body) {
			t.Errorf("%d bytes: a whole shared body was copied", n)
		}
		if b.Response.Headers.Get("Content-Type") == "" || b.Response.BodyTruncated != (n > journal.MaxBody) {
			t.Errorf("%d bytes: %+v", n, b.Response)
		}
	}
}

// An answer whose header names are hostemu's own keeps those names as the constants
// they are, and copies the values: a value may be a buffer's bytes the caller reuses,
// or share memory that must not stay alive.
func TestAnswerHeaderValuesAreCopied(t *testing.T) {
	t.Parallel()
	buf := []byte("application/json; charset=utf-8" + "3000" + "2999")
	at := func(i, j int) string { return unsafe.String(&buf[i], j-i) }
	h := http.Header{"Content-Type": {at(0, 31)}, "Vary": {"Accept-Encoding"},
		"X-Ratelimit-Limit": {at(31, 35)}, "X-Ratelimit-Remaining": {at(35, 39)}}
	e := journal.Entry{Method: "GET", Path: "/v1/deployments/dpl_1", Status: 200}
	e.SetResponse(200, h, []byte("{}"))
	kept := journal.New(1).Record(e).Response.Headers
	copy(buf, strings.Repeat("z", len(buf))) // the caller reuses its buffer
	want := journal.Headers{{Name: "Content-Type", Value: "application/json; charset=utf-8"},
		{Name: "X-Ratelimit-Limit", Value: "3000"}, {Name: "X-Ratelimit-Remaining", Value: "2999"}}
	if !reflect.DeepEqual(kept, want) {
		t.Fatalf("answer headers kept: %v, want %v", kept, want)
	}
}
