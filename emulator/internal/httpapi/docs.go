package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// The error codes' pages are written with plain Go rather than html/template: any
// reachable text/template execution keeps every exported method of every reachable type
// in the binary (reflect.Value.MethodByName), which made hostemu larger and slower to
// start (issue #38). TestDocsPagesMatchTheTemplate renders every page with the template
// these functions replaced and requires the same bytes.

// docsTop and docsBottom frame every page; the title goes between docsTop and docsHead.
const (
	docsTop  = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
	docsHead = " · hostemu</title>\n" +
		"<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .25em}td,th{text-align:left;padding:.2em .8em .2em 0;vertical-align:top}</style>\n" +
		"</head><body>\n"
	docsBottom   = "\n</body></html>\n"
	docsBackLink = "<p><a href=\"/docs/errors\">All error codes</a></p>\n"
	docsEnvelope = `<code>{"error":{"code","message","doc_url"}}</code>`
)

// docsIndexPage is the list of every code: the catalogue is fixed, so it is written once.
var docsIndexPage = sync.OnceValue(func() []byte { return docsIndexHTML(apperr.Catalogue()) })

// docsIndexHTML is the page of /docs/errors: a table of every code, linked to its page.
// A code goes into the link escaped as HTML only, not as a URL: codes are snake_case
// ([a-z0-9_], fault.ValidCode; TestCatalogueCodesAreValid), which a URL path keeps as is.
func docsIndexHTML(all []apperr.Doc) []byte {
	var b strings.Builder
	b.WriteString(docsTop + "Error codes" + docsHead)
	b.WriteString("<h1>hostemu error codes</h1>\n" +
		"<p>Every error of the hosting and decryption services and of the control API answers\n" +
		docsEnvelope + ", with these codes:</p>\n" +
		"<table><tr><th>status</th><th>code</th><th>meaning</th></tr>\n")
	for _, d := range all {
		code := escapeHTML(string(d.Code))
		b.WriteString("<tr><td>" + strconv.Itoa(d.Status) + "</td><td><a href=\"/docs/errors/" + code + "\"><code>" + code +
			"</code></a></td><td>" + escapeHTML(d.Meaning) + "</td></tr>\n")
	}
	b.WriteString("</table>" + docsBottom)
	return []byte(b.String())
}

// docsCodeHTML is the page of a catalogue code: its status, service and meaning.
func docsCodeHTML(d apperr.Doc) []byte {
	code := escapeHTML(string(d.Code))
	var b strings.Builder
	b.WriteString(docsTop + code + docsHead + docsBackLink)
	b.WriteString("<h1><code>" + code + "</code></h1>\n<p>HTTP status <b>" + strconv.Itoa(d.Status) + "</b>")
	if d.Service != "any" {
		b.WriteString(" · " + escapeHTML(d.Service))
	}
	b.WriteString("</p>\n<p>" + escapeHTML(d.Meaning) + "</p>\n" +
		"<p>Every error answers " + docsEnvelope + "; the message says what was wrong with this request.</p>\n" + docsBottom)
	return []byte(b.String())
}

// docsUnknownHTML is the page of a well-formed code hostemu does not return itself: one
// a fault or a scenario made up.
func docsUnknownHTML(code string) []byte {
	code = escapeHTML(code)
	return []byte(docsTop + code + docsHead + docsBackLink +
		"<h1><code>" + code + "</code></h1>\n" +
		"<p>This code is not in hostemu's catalogue: it was injected by a fault or a scenario, to test how a client copes with an error it does not know.</p>\n" +
		docsBottom)
}

// htmlEscaper escapes text as html/template does in text and attribute values (which,
// unlike html.EscapeString, also escapes + and replaces NUL).
var htmlEscaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"&", "&amp;",
	"'", "&#39;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

func escapeHTML(s string) string { return htmlEscaper.Replace(s) }

func (a *API) docsIndex(c *gin.Context) {
	a.renderDocs(c, docsIndexPage())
}

func (a *API) docsError(c *gin.Context) {
	code := c.Param("code")
	if d, ok := apperr.Lookup(apperr.Code(code)); ok {
		a.renderDocs(c, docsCodeHTML(d))
		return
	}
	if !fault.ValidCode(code) {
		a.renderError(c, apperr.New(apperr.NotFound, "no documentation page for "+code))
		return
	}
	a.renderDocs(c, docsUnknownHTML(code))
}

func (a *API) renderDocs(c *gin.Context, page []byte) {
	c.Status(http.StatusOK)
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Writer.Write(page)
}
