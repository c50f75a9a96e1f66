package edge

import (
	"bytes"
	"html"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/utf8cut"
)

// fileAnswer holds what one file answer allocates, in one allocation: the values of its
// headers (each a one-element slice of vals) and the reader ServeContent reads.
type fileAnswer struct {
	vals [3]string // X-Hostemu-Deployment, ETag, Content-Type
	rd   bytes.Reader
}

// serveFile answers a request for one of d.Deployment's files: its uploaded bytes through
// http.ServeContent (conditional and range requests, HEAD), or a placeholder when its hash
// was never uploaded.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, d Decision) *apperr.Error {
	hd := w.Header()
	a := new(fileAnswer)
	a.vals[0] = d.Deployment.ID
	hd["X-Hostemu-Deployment"] = a.vals[0:1:1]
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd["Allow"] = allowHeader
		return failure(CodeMethodNotAllowed, d)
	}
	name, hash, ok := ResolvePath(r.URL.Path, d.Deployment.Files)
	if !ok {
		return failure(CodeNotFound, d)
	}
	var (
		e        entry
		uploaded bool
	)
	if h.files != nil {
		e, uploaded = h.files.get(hash)
	}
	if uploaded {
		a.vals[1] = e.etag
		hd["Etag"] = a.vals[1:2:2]
		if a.vals[2] = contentType(path.Ext(name)); a.vals[2] != "" {
			hd["Content-Type"] = a.vals[2:3:3]
		}
	} else {
		e.data = Placeholder(d.Deployment.ID, name, hash)
		hd["X-Hostemu-Placeholder"] = placeholderHeader
		a.vals[2] = "text/html; charset=utf-8"
		hd["Content-Type"] = a.vals[2:3:3]
	}
	a.rd.Reset(e.data)
	if _, ranged := r.Header["Range"]; !ranged {
		http.ServeContent(w, r, name, time.Time{}, &a.rd)
		return nil
	}
	rw := rangeRefusal{ResponseWriter: w}
	http.ServeContent(&rw, withFewRanges(r, len(e.data)), name, time.Time{}, &a.rd)
	if !rw.refused {
		return nil
	}
	// ServeContent's 416 is text/plain; the edge answers its own error instead, keeping
	// the Content-Range it set (bytes */size) when the ranges parsed
	msg := "the Range header " + quoteCut(r.Header.Get("Range")) + " selects no byte of " + name + " (" + strconv.Itoa(len(e.data)) + " bytes)"
	return &apperr.Error{Code: apperr.RangeNotSatisfiable, Message: msg}
}

// rangeRefusal passes an answer through, except a 416, which it holds back (with its
// body) for the edge to answer with its own error. Only a request with a Range header
// goes through it, so the common request allocates nothing more.
type rangeRefusal struct {
	http.ResponseWriter
	refused bool
}

func (rw *rangeRefusal) WriteHeader(status int) {
	if status == http.StatusRequestedRangeNotSatisfiable {
		rw.refused = true
		return
	}
	rw.ResponseWriter.WriteHeader(status)
}

func (rw *rangeRefusal) Write(b []byte) (int, error) {
	if rw.refused {
		return len(b), nil
	}
	return rw.ResponseWriter.Write(b)
}

// quoteCut quotes a client's header value for a message, cut to 64 bytes on a rune
// boundary: the message is journaled, and a header may be long.
func quoteCut(v string) string {
	const most = 64
	if len(v) <= most {
		return strconv.Quote(v)
	}
	return strconv.Quote(v[:utf8cut.At(v, most)]) + "…"
}

// MaxRanges is how many byte ranges one request may ask for; a Range header with more
// is ignored and the whole file is served (200), as RFC 9110 allows: thousands of tiny
// ranges would otherwise make a short request cost a multipart answer many times the
// file's size.
const MaxRanges = 16

// withFewRanges is r, or a copy without its Range header when it asks for more than
// MaxRanges ranges, or with each empty suffix range (-0) of a file of size bytes made
// one that starts at its end.
func withFewRanges(r *http.Request, size int) *http.Request {
	rng := r.Header.Get("Range")
	if strings.Count(rng, ",") >= MaxRanges {
		r2 := r.Clone(r.Context())
		r2.Header.Del("Range")
		return r2
	}
	if fixed, ok := noEmptySuffix(rng, size); ok {
		r2 := r.Clone(r.Context())
		r2.Header.Set("Range", fixed)
		return r2
	}
	return r
}

// noEmptySuffix rewrites each suffix range of length 0 ("-0", "-000") in rng as
// "<size>-", and reports whether there was one. RFC 9110 §14.1.2 counts it
// unsatisfiable, but http.ServeContent serves it as the range size to size-1: a 206
// with Content-Range "bytes 100-99/100". "<size>-" is what it does refuse (416, with
// Content-Range "bytes */size", or dropped beside a satisfiable range).
func noEmptySuffix(rng string, size int) (string, bool) {
	specs, ok := strings.CutPrefix(rng, "bytes=")
	if !ok || !strings.Contains(specs, "-0") {
		return "", false
	}
	parts := strings.Split(specs, ",")
	found := false
	for i, p := range parts {
		digits, ok := strings.CutPrefix(strings.TrimSpace(p), "-")
		if ok && digits != "" && strings.Trim(digits, "0") == "" {
			parts[i], found = strconv.Itoa(size)+"-", true
		}
	}
	if !found {
		return "", false
	}
	return "bytes=" + strings.Join(parts, ","), true
}

// Placeholder returns the page served for a file whose hash was never uploaded (lenient
// uploads): the same bytes for the same deployment, path and hash.
func Placeholder(deploymentID, name, hash string) []byte {
	var b bytes.Buffer
	b.WriteString("<!doctype html>\n<meta charset=\"utf-8\">\n<title>hostemu placeholder</title>\n")
	b.WriteString("<h1>Placeholder</h1>\n<p>Deployment <code>")
	b.WriteString(html.EscapeString(deploymentID))
	b.WriteString("</code> lists <code>")
	b.WriteString(html.EscapeString(name))
	b.WriteString("</code> with hash <code>")
	b.WriteString(html.EscapeString(hash))
	b.WriteString("</code>, but no file with that hash was uploaded, so hostemu serves this page instead.</p>\n")
	b.WriteString("<p>Upload it with <code>POST /v1/files</code> (header <code>X-File-Digest</code>) to serve the real bytes.</p>\n")
	return b.Bytes()
}
