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
	// ahead bytes of buf were read ahead by peek, for a fault's body matcher; Read
	// serves them first (off of them served), then err, the error peek met, if any.
	ahead, off int
	err        error
}

func (c *capture) Read(p []byte) (int, error) {
	c.read = true
	if c.off < c.ahead {
		n := copy(p, c.buf.Bytes()[c.off:c.ahead])
		c.off += n
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
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

// peek reads ahead what the journal keeps of the body (journal.MaxBody bytes, and one
// more to know it was cut) so that a fault's body matcher sees it before the handler
// runs; the handler then reads the same bytes from the copy: the body is read once.
// It returns the body, or "" when it is longer than the journal keeps (no body matcher
// then holds: a cut body is not JSON).
func (c *capture) peek() string {
	if c.ahead == 0 && c.err == nil && !c.read {
		c.read = true
		var chunk [4096]byte
		for c.buf.Len() <= journal.MaxBody && c.err == nil {
			n, err := c.r.Read(chunk[:min(len(chunk), journal.MaxBody+1-c.buf.Len())])
			c.buf.Write(chunk[:n])
			if err != nil {
				c.eof, c.err = true, err
			}
		}
		c.ahead = c.buf.Len()
	}
	if c.buf.Len() > journal.MaxBody {
		return ""
	}
	return c.buf.String()
}
