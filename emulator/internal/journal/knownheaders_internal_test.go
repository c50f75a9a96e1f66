package journal

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
)

// TestKnownAnswerHeaders holds knownAnswerHeaders, the lookups an answer of known
// header names takes, to the walk of every header it stands in for: whenever it
// answers, it answers the same headers in the same order, and it answers the common
// answers (the GET chain's, the edge's, an upload's).
func TestKnownAnswerHeaders(t *testing.T) {
	names := append(append([]string{}, keptNames[:]...), leftNames[:]...)
	names = append(names, "content-type", "X-RateLimit-Limit", "x-ratelimit-reset", "X-Ratelimit-Other", "Authorization",
		"Cookie", "Location ", "Set-Cookie", "X-Custom", "LOCATION", "retry-after")
	values := [][]string{nil, {}, {"1"}, {"a", "b"}, {"application/json; charset=utf-8"}, {""}}
	rng := rand.New(rand.NewPCG(1, 38))
	answered := 0
	for i := range 20000 {
		h := http.Header{}
		for range rng.IntN(12) {
			pool := names
			if i%2 == 0 { // half the maps of the names hostemu writes only
				pool = names[:len(keptNames)+len(leftNames)]
			}
			h[pool[rng.IntN(len(pool))]] = values[rng.IntN(len(values))]
		}
		var kb, wb [maxAnswerHeaderCount]Header
		known, ok := knownAnswerHeaders(h, &kb)
		walked, cut := walkAnswerHeaders(nil, h, &wb)
		if !ok {
			if i%2 == 0 {
				t.Fatalf("%v, of the names hostemu writes only, is walked", h)
			}
			continue
		}
		answered++
		if cut || !slices.Equal(known, walked) {
			t.Fatalf("%v: known %v, walked %v (cut %v)", h, known, walked, cut)
		}
	}
	if answered < 5000 {
		t.Fatalf("the lookups answered only %d maps of 20000", answered)
	}
	for _, h := range []http.Header{
		{"Content-Type": {"application/json; charset=utf-8"}, "Vary": {"Accept-Encoding"}, "X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"99"}, "X-Ratelimit-Reset": {"1700000000"}},
		{"Content-Type": {"text/html; charset=utf-8"}, "Server": {"hostemu"}, "X-Hostemu-Deployment": {"dpl_x"}, "Etag": {`"x"`}, "Last-Modified": {"Mon, 02 Jan 2006 15:04:05 GMT"}, "Accept-Ranges": {"bytes"}, "Content-Length": {"10"}, "Cache-Control": {"no-cache"}},
	} {
		if _, ok := knownAnswerHeaders(h, new([maxAnswerHeaderCount]Header)); !ok {
			t.Errorf("the lookups do not answer the common answer %v", h)
		}
	}
}
