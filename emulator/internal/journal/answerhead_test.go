package journal_test

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// An answer's head taken as it was sent (AnswerHead.Take, then SetAnswerHead) is kept
// as the map it was taken from is kept by SetResponse and SetSharedResponse (the path
// before, the oracle here): the same headers, the same strings, the same order, the
// same truncation flag, the same body; and the map's later edits, in place or not, do
// not reach the entry.
func TestAnswerHeadIsTheMapsEntry(t *testing.T) {
	t.Parallel()
	// eight kept names at most (more, and which eight are kept follows the map's order,
	// then as now: TestAnswerHeadCutAtEight), two of them not canonical (the walk)
	names := []string{"Content-Type", "Location", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining",
		"X-Ratelimit-Reset", "content-type", "X-RateLimit-Limit",
		"Vary", "Date", "Etag", "Content-Length", "Set-Cookie", "X-Custom"}
	values := [][]string{{}, {"1"}, {"a", "b"}, {"application/json; charset=utf-8"}, {""},
		{strings.Repeat("l", 700)}, {strings.Repeat("é", 300) + "x"}}
	rng := rand.New(rand.NewPCG(2, 38))
	j := journal.New(4)
	for i := range 20000 {
		h := http.Header{}
		for range rng.IntN(11) {
			h[names[rng.IntN(len(names))]] = values[rng.IntN(len(values))]
		}
		body := strings.Repeat("b", rng.IntN(journal.MaxBody+2))
		shared := i%2 == 0
		entry := func() journal.Entry {
			return journal.Entry{Method: "GET", Path: "/v1/x", Status: 200}
		}
		old := entry()
		if shared {
			old.SetSharedResponse(200, h, body)
		} else {
			old.SetResponse(200, h, []byte(body))
		}
		want := j.Record(old)

		var sent journal.AnswerHead
		sent.Take(h)
		sent.Take(http.Header{"Location": {"/a second take changes nothing"}})
		for k := range h { // edits after the head was sent
			if len(h[k]) > 0 {
				h[k] = append([]string(nil), h[k]...)
				h[k][0] = "edited"
			}
		}
		h["Retry-After"] = []string{"99"}
		e := entry()
		if shared {
			e.SetSharedResponse(200, nil, body)
		} else {
			e.SetResponse(200, h, []byte(body)) // the map given too: the head taken wins
		}
		e.SetAnswerHead(&sent)
		got := j.Record(e)
		got.Seq, want.Seq = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("map %v:\nas sent %+v\nthe map %+v", h, got.Response, want.Response)
		}
	}
}

// More than eight kept headers: both paths keep eight and say the rest were cut.
func TestAnswerHeadCutAtEight(t *testing.T) {
	t.Parallel()
	h := http.Header{"Content-Type": {"a"}, "Vary": {"v"}}
	for _, c := range "ABCDEFGHIJ" {
		h["X-Ratelimit-"+string(c)] = []string{"1"}
	}
	j := journal.New(2)
	old := journal.Entry{Method: "GET"}
	old.SetResponse(200, h, nil)
	want := j.Record(old).Response
	var sent journal.AnswerHead
	sent.Take(h)
	e := journal.Entry{Method: "GET"}
	e.SetResponse(200, nil, nil)
	e.SetAnswerHead(&sent)
	got := j.Record(e).Response
	if len(got.Headers) != 8 || len(want.Headers) != 8 || !got.HeadersTruncated || !want.HeadersTruncated {
		t.Fatalf("as sent %d headers (cut %v), the map %d (cut %v)", len(got.Headers), got.HeadersTruncated, len(want.Headers), want.HeadersTruncated)
	}
}
