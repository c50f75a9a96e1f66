// Package compress gzips HTTP responses for clients that ask for it. It is plain
// net/http, so any of hostemu's handlers can use it: the hosting, decryption and
// control APIs do, and the edge should (see Responses).
package compress

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// MinSize is the smallest body worth compressing: about one TCP segment. Smaller
// bodies go out as they are.
const MinSize = 1400

// wrap is gzhttp's handler wrapper, configured once: gzip only (no zstd: the issue and
// every client ask for gzip), bodies of MinSize bytes or more.
var wrap = func() func(http.Handler) http.HandlerFunc {
	w, err := gzhttp.NewWrapper(gzhttp.MinSize(MinSize), gzhttp.EnableZstd(false))
	if err != nil {
		panic(err) // the options are constants
	}
	return w
}()

// Responses gzips h's answers when the request's Accept-Encoding allows gzip and the
// body is at least MinSize bytes, and always adds Vary: Accept-Encoding. It leaves
// alone HEAD requests, 304s and other bodiless statuses, bodies smaller than MinSize,
// bodies that already carry a Content-Encoding or a Content-Range, and content types
// that are already compressed (images, video, archives: gzhttp's default filter). It
// buffers the first MinSize bytes to decide, then streams; Flush and Hijack pass
// through.
//
// The edge opts in by wrapping its handler: compress.Responses(edgeHandler). It
// should set Content-Type before the first Write (the filter decides on it), serve a
// precompressed file with its own Content-Encoding (then left as is), and expect
// Accept-Ranges to be dropped from compressed answers (gzhttp does, as byte ranges of
// the uncompressed file would be wrong).
func Responses(h http.Handler) http.Handler {
	gz := wrap(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptsGzip(r.Header["Accept-Encoding"]) {
			// nothing to compress for this client: spare it the wrapper, keep the Vary
			// (added to, not replacing, the Vary: Origin of a CORS answer)
			if h := w.Header(); len(h["Vary"]) == 0 {
				h["Vary"] = varyAcceptEncoding
			} else {
				h.Add("Vary", "Accept-Encoding")
			}
			h.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}

// varyAcceptEncoding is shared by every answer: its capacity is its length, so a later
// Header.Add("Vary", …) copies rather than writes into it.
var varyAcceptEncoding = []string{"Accept-Encoding"}

// acceptsGzip reports whether Accept-Encoding values mention gzip at all (gzhttp
// decides the rest, q=0 included).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		if strings.Contains(strings.ToLower(v), "gzip") {
			return true
		}
	}
	return false
}

// Skip marks a response, through its headers, as one to send uncompressed: a stream of
// server-sent events must reach the client as each event is flushed. The mark is
// removed before the headers are sent. Call it only when AcceptsGzip: for other clients
// no wrapper is there to remove it.
func Skip(h http.Header) { h.Set(gzhttp.HeaderNoCompression, "1") }

// AcceptsGzip reports whether the request's client may get a gzipped answer, so that
// Responses wraps its writer.
func AcceptsGzip(r *http.Request) bool { return acceptsGzip(r.Header["Accept-Encoding"]) }
