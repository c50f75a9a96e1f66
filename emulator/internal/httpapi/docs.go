package httpapi

import (
	"html/template"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

var docsTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("docs").Parse(docsSource)) })

const docsSource = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · hostemu</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .25em}td,th{text-align:left;padding:.2em .8em .2em 0;vertical-align:top}</style>
</head><body>
{{if .Doc}}<p><a href="/docs/errors">All error codes</a></p>
<h1><code>{{.Doc.Code}}</code></h1>
<p>HTTP status <b>{{.Doc.Status}}</b>{{if ne .Doc.Service "any"}} · {{.Doc.Service}}{{end}}</p>
<p>{{.Doc.Meaning}}</p>
<p>Every error answers <code>{"error":{"code","message","doc_url"}}</code>; the message says what was wrong with this request.</p>
{{else if .Code}}<p><a href="/docs/errors">All error codes</a></p>
<h1><code>{{.Code}}</code></h1>
<p>This code is not in hostemu's catalogue: it was injected by a fault or a scenario, to test how a client copes with an error it does not know.</p>
{{else}}<h1>hostemu error codes</h1>
<p>Every error of the hosting and decryption services and of the control API answers
<code>{"error":{"code","message","doc_url"}}</code>, with these codes:</p>
<table><tr><th>status</th><th>code</th><th>meaning</th></tr>
{{range .All}}<tr><td>{{.Status}}</td><td><a href="/docs/errors/{{.Code}}"><code>{{.Code}}</code></a></td><td>{{.Meaning}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`

type docsPage struct {
	Title string
	Doc   *apperr.Doc
	Code  string
	All   []apperr.Doc
}

func (a *API) docsIndex(c *gin.Context) {
	a.renderDocs(c, docsPage{Title: "Error codes", All: apperr.Catalogue()})
}

func (a *API) docsError(c *gin.Context) {
	code := c.Param("code")
	if d, ok := apperr.Lookup(apperr.Code(code)); ok {
		a.renderDocs(c, docsPage{Title: code, Doc: &d})
		return
	}
	if !fault.ValidCode(code) {
		a.renderError(c, apperr.New(apperr.NotFound, "no documentation page for "+code))
		return
	}
	a.renderDocs(c, docsPage{Title: code, Code: code})
}

func (a *API) renderDocs(c *gin.Context, p docsPage) {
	c.Status(http.StatusOK)
	c.Header("Content-Type", "text/html; charset=utf-8")
	if err := docsTmpl().Execute(c.Writer, p); err != nil {
		a.log.Error("rendering docs", "err", err)
	}
}
