package httpapi

import (
	"bufio"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
)

// streamed is a handler's value that writes a large JSON body itself, as it goes, so
// that the answer is never built whole in memory (the journal, the state). It answers
// 200.
type streamed func(w io.Writer) error

// writeStreamed answers 200 with the JSON fn writes. Once bytes are on the wire an error
// can no longer become an envelope: the connection is dropped, so the client sees a
// cut answer rather than a complete-looking wrong one.
func (a *API) writeStreamed(c *gin.Context, fn streamed) {
	c.Writer.Header()["Content-Type"] = jsonContentTypeValue
	c.Status(http.StatusOK)
	bw := bufio.NewWriterSize(c.Writer, 32<<10)
	err := fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		a.log.Debug("streamed answer cut", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}
