package httpapi

import (
	"bytes"
	"io"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// capture keeps the first journal.MaxBody bytes of a request body as it is read.
type capture struct {
	r   io.ReadCloser
	buf bytes.Buffer
	eof bool // the body was read to its end
	// read says the handler asked for the body: a client that sent Expect:
	// 100-continue has been told to send it
	read bool
}

func (c *capture) Read(p []byte) (int, error) {
	c.read = true
	n, err := c.r.Read(p)
	if err != nil {
		c.eof = true
	}
	if room := journal.MaxBody + 1 - c.buf.Len(); room > 0 && n > 0 {
		c.buf.Write(p[:min(n, room)])
	}
	return n, err
}

func (c *capture) Close() error { return c.r.Close() }
