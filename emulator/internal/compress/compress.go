// Package compress gzips HTTP responses for clients that ask for it. It is plain
// net/http, so any of hostemu's handlers can use it: the hosting, decryption and
// control APIs do, and the edge should (see Responses).
package compress

import (
	"net/http"

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
func Responses(h http.Handler) http.Handler { return wrap(h) }

// Skip marks a response, through its headers, as one to send uncompressed: a stream of
// server-sent events must reach the client as each event is flushed. The mark is
// removed before the headers are sent.
func Skip(h http.Header) { h.Set(gzhttp.HeaderNoCompression, "1") }
