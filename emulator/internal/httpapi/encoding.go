package httpapi

import (
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

func isGzip(coding string) bool {
	coding = strings.TrimSpace(coding)
	return strings.EqualFold(coding, "gzip") || strings.EqualFold(coding, "x-gzip")
}

// unsupportedEncoding is 415 for a body in a Content-Encoding hostemu does not decode
// (decodeBody has taken gzip off), or nil.
func unsupportedEncoding(r *http.Request) error {
	ce := strings.TrimSpace(headerOf(r.Header, "Content-Encoding"))
	if ce == "" || strings.EqualFold(ce, "identity") {
		return nil
	}
	return apperr.New(apperr.UnsupportedMediaType, "Content-Encoding "+ce+" is not supported: send the body as is or with Content-Encoding: gzip")
}

// gunzipBody decodes a gzip body, opening the decoder at the first read.
type gunzipBody struct {
	r  io.ReadCloser
	zr *gzip.Reader
}

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(g.r)
		if err != nil {
			if err == io.EOF {
				return 0, io.EOF // an empty body is empty in any coding
			}
			return 0, gzipError(err)
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError(err)
	}
	return n, err
}

func (g *gunzipBody) Close() error { return g.r.Close() }

// gzipError names a corrupt gzip body (400 invalid_request); the errors of the body
// underneath (a read deadline, a budget) go through unchanged.
func gzipError(err error) error {
	var corrupt flate.CorruptInputError
	if errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &corrupt) {
		return apperr.New(apperr.InvalidRequest, "the request body is not valid gzip (Content-Encoding: gzip): "+err.Error())
	}
	return err
}
