package httpapi

import (
	"io"

	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// capture keeps the first journal.MaxBody bytes of a request body as it is read (and
// one more, to know the body was cut). It lives in the pooled exchange, and buf's array
// with it, from one request to the next: keeping a body costs a copy, no allocation.
type capture struct {
	r   io.ReadCloser
	buf []byte
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
		n := copy(p, c.buf[c.off:c.ahead])
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
	if room := journal.MaxBody + 1 - len(c.buf); room > 0 && n > 0 {
		c.keep(p[:min(n, room)])
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
		for len(c.buf) <= journal.MaxBody && c.err == nil {
			n, err := c.r.Read(chunk[:min(len(chunk), journal.MaxBody+1-len(c.buf))])
			c.keep(chunk[:n])
			if err != nil {
				c.eof, c.err = true, err
			}
		}
		c.ahead = len(c.buf)
	}
	if len(c.buf) > journal.MaxBody {
		return ""
	}
	return string(c.buf)
}

// keep appends b, which fits in what the journal keeps, to buf.
func (c *capture) keep(b []byte) {
	if c.buf == nil {
		c.buf = make([]byte, 0, journal.MaxBody+1)
	}
	c.buf = append(c.buf, b...)
}
