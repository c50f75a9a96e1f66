package httpapi

import (
	"net/http/httptest"
	"runtime"
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
