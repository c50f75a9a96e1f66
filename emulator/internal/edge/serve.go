package edge

import (
	"bytes"
	"html"
	"mime"
	"net/http"
	"path"
	"time"
)

// serveFile answers a request for one of d.Deployment's files: its uploaded bytes through
// http.ServeContent (conditional and range requests, HEAD), or a placeholder when its hash
// was never uploaded.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, d Decision) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = allowHeader
		h.fail(w, r, d, CodeMethodNotAllowed)
		return
	}
	name, hash, ok := ResolvePath(r.URL.Path, d.Deployment.Files)
	if !ok {
		h.fail(w, r, d, CodeNotFound)
		return
	}
	hd := w.Header()
	var content []byte
	uploaded := false
	if h.files != nil {
		content, uploaded = h.files.Get(hash)
	}
	if uploaded {
		hd["Etag"] = []string{`"` + hash + `"`}
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
			hd["Content-Type"] = []string{ct}
		}
	} else {
		hd["X-Hostemu-Placeholder"] = placeholderHeader
		hd["Content-Type"] = []string{"text/html; charset=utf-8"}
		content = Placeholder(d.Deployment.ID, name, hash)
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(content))
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
