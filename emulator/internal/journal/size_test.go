package journal

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestEntryBytesFigure(t *testing.T) {
	if MaxEntryBytes != 17544 {
		t.Errorf("MaxEntryBytes = %d; docs/security.md says 17,544", MaxEntryBytes)
	}
}

func TestHeadersBoundedAndRedacted(t *testing.T) {
	j := New(1)
	h := http.Header{"Authorization": {"Bearer secret"}, "Proxy-Authorization": {"Basic eA=="}, "Idempotency-Key": {"k1"}}
	for i := range 100 {
		h.Set(fmt.Sprintf("X-Big-%03d", i), strings.Repeat("v", 500))
	}
	j.Add(Entry{Headers: HeadersOf(h)})
	e := j.List(Filter{})[0]
	n := 0
	for _, x := range e.Headers {
		n += len(x.Name) + len(x.Value)
		if strings.Contains(x.Value, "secret") || strings.Contains(x.Value, "eA==") {
			t.Errorf("credential kept: %v", x)
		}
	}
	if n > MaxHeaders || len(e.Headers) > maxHeaderCount || !e.HeadersTruncated {
		t.Errorf("headers: %d bytes, %d headers, truncated %v", n, len(e.Headers), e.HeadersTruncated)
	}
	if e.Headers.Get("authorization") != Redacted || e.Headers.Get("idempotency-key") != "k1" {
		t.Errorf("headers: %v", e.Headers)
	}
}
