package httpapi

import (
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// A client declaring a huge Content-Length and sending little does not make the server
// allocate what it declared.
func TestReadBodyDoesNotTrustContentLength(t *testing.T) {
	r := httptest.NewRequest("PUT", "/_emulator/state", strings.NewReader("{}"))
	r.ContentLength = 512 << 20
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = r
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := readBody(c, 512<<20)
	runtime.ReadMemStats(&after)
	if err != nil || string(b) != "{}" {
		t.Fatalf("readBody = %q, %v", b, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Fatalf("allocated %d MiB for a 2-byte body", grew>>20)
	}
}

// TestNextCap: the body buffer's steps. 512 bytes first; once they have come, a
// declared length up to 64 KiB is one buffer (its byte more reads the end); above,
// doubling from 64 KiB, never landing on the declared length itself (which would take
// one more copy to see the end); after 1 MiB the declared length at once; an undeclared
// length doubles from 512 bytes up to the limit and its byte more.
func TestNextCap(t *testing.T) {
	steps := func(declared, limit int64) []int {
		var caps []int
		for c := 0; int64(c) <= max(declared, limit) && len(caps) < 40; {
			c = nextCap(c, declared, limit)
			caps = append(caps, c)
			if int64(c) == declared+1 || (declared < 0 && int64(c) == limit+1) {
				break
			}
		}
		return caps
	}
	for _, tc := range []struct {
		declared, limit int64
		want            []int
	}{
		{0, 1 << 20, []int{1}},
		{100, 1 << 20, []int{101}},
		{512, 1 << 20, []int{513}},
		{1024, 1 << 20, []int{512, 1025}},
		{64 << 10, 1 << 20, []int{512, 64<<10 + 1}},
		{64<<10 + 1, 1 << 20, []int{512, 64 << 10, 64<<10 + 2}},
		{256 << 10, 1 << 20, []int{512, 64 << 10, 128 << 10, 256<<10 + 1}},
		{3 << 20, 4 << 20, []int{512, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 3<<20 + 1}},
		{-1, 4 << 10, []int{512, 1024, 2048, 4096, 4097}},
	} {
		if got := steps(tc.declared, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("declared %d, limit %d: %v, want %v", tc.declared, tc.limit, got, tc.want)
		}
	}
}
