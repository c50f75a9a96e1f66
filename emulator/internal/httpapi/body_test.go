package httpapi

import (
	"bytes"
	"io"
	"mime"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

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

// isJSON's forms answered without parsing are JSON by mime.ParseMediaType too, and
// every other form still goes through it: the two agree on the fast forms and on
// variants of them (case, spaces, parameters, other types).
func TestIsJSONFastForms(t *testing.T) {
	slow := func(ct string) bool {
		mt, _, err := mime.ParseMediaType(ct)
		return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
	}
	forms := []string{"application/json", "application/json; charset=utf-8", "Application/JSON",
		"application/json;charset=utf-8", "application/json; charset=UTF-8", "application/json ",
		"application/json; charset=", "application/jsonx", "application/problem+json", "text/json",
		"application/json; charset=utf-8; x=1", "", "application/octet-stream", "application/json;"}
	for _, ct := range forms {
		if got, want := isJSON(ct), slow(ct); got != want {
			t.Errorf("isJSON(%q) = %v, mime.ParseMediaType says %v", ct, got, want)
		}
	}
	for _, ct := range forms[:2] {
		if !slow(ct) {
			t.Errorf("%q, a fast form, is not JSON by mime.ParseMediaType", ct)
		}
		if n := testing.AllocsPerRun(100, func() { isJSON(ct) }); n != 0 {
			t.Errorf("isJSON(%q) allocates %.0f times", ct, n)
		}
	}
}

// readBody answers every body's bytes, of any length, declared or not, however they
// arrive, in a buffer of its own: the first step's pooled buffer is never handed out,
// so a later body does not change an earlier one.
func TestReadBodyFirstStepPooled(t *testing.T) {
	type read struct {
		want []byte
		got  []byte
	}
	var all []read
	for _, size := range []int{0, 1, 100, 510, 511, 512, 513, 1000, 1024, 1025, 4096, 70000} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(size + i*7)
		}
		for _, declared := range []bool{true, false} {
			for _, how := range []string{"whole", "half", "byte"} {
				if how == "byte" && size > 4096 {
					continue
				}
				var src io.Reader = bytes.NewReader(want)
				switch how {
				case "half":
					src = iotest.HalfReader(src)
				case "byte":
					src = iotest.OneByteReader(src)
				}
				r := httptest.NewRequest("POST", "/v1/files", io.NopCloser(src))
				r.ContentLength = -1
				if declared {
					r.ContentLength = int64(size)
				}
				c, _ := gin.CreateTestContext(httptest.NewRecorder())
				c.Request = r
				got, err := readBody(c, maxFileBody)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d bytes (declared %v, %s): %d bytes, %v", size, declared, how, len(got), err)
				}
				all = append(all, read{want, got})
			}
		}
	}
	for _, r := range all {
		if !bytes.Equal(r.got, r.want) {
			t.Fatalf("a body of %d bytes changed after later reads", len(r.want))
		}
	}
}
