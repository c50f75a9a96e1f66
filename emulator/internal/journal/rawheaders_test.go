package journal

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// An entry given the request's headers (SetRequestHeaders, the hot path) keeps exactly
// what one given HeadersOf of them keeps: sorted, credentials redacted, multiple values
// joined, and cut at the same bounds.
func TestSetRequestHeadersKeepsWhatHeadersOfKeeps(t *testing.T) {
	many := http.Header{}
	for i := range maxHeaderCount + 5 {
		many.Set("X-H"+strconv.Itoa(i), "v")
	}
	for name, h := range map[string]http.Header{
		"none":        {},
		"credentials": {"Authorization": {"Bearer secret"}, "Cookie": {"a=b"}, "Proxy-Authorization": {"Basic eA=="}, "Accept": {"*/*"}},
		"multi":       {"Accept": {"a", "b"}, "User-Agent": {"wrk"}},
		"many":        many,
		"long":        {"X-Long": {strings.Repeat("é", MaxHeaders)}, "A": {"1"}},
	} {
		t.Run(name, func(t *testing.T) {
			viaRaw := Entry{Path: "/p"}
			viaRaw.SetRequestHeaders(h)
			viaRaw.own()
			viaHeadersOf := Entry{Path: "/p", Headers: HeadersOf(h)}
			viaHeadersOf.own()
			if !reflect.DeepEqual(viaRaw, viaHeadersOf) {
				t.Fatalf("raw %+v\nHeadersOf %+v", viaRaw, viaHeadersOf)
			}
			if v := viaRaw.Headers.Get("Authorization"); v != "" && v != Redacted {
				t.Fatalf("credential kept: %q", v)
			}
		})
	}
}
