package httpapi

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// docsOracleSource is the html/template the docs pages were rendered with before
// docs.go wrote them in plain Go (issue #38); the pages must stay byte for byte what it
// renders.
const docsOracleSource = `<!doctype html>
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

var docsOracle = template.Must(template.New("docs").Parse(docsOracleSource))

type docsOraclePage struct {
	Title string
	Doc   *apperr.Doc
	Code  string
	All   []apperr.Doc
}

func renderDocsOracle(t *testing.T, p docsOraclePage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := docsOracle.Execute(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hostile is every character html/template escapes in text, and then some.
const hostile = `<script>"a" & 'b' + c</script>` + "\x00 é · \t\n%41"

// TestDocsPagesMatchTheTemplate: every docs page is the bytes the html/template it
// replaced renders: the index, every catalogue code, unknown valid codes, and made-up
// entries full of characters to escape.
func TestDocsPagesMatchTheTemplate(t *testing.T) {
	type tc struct {
		name     string
		got      []byte
		oracle   docsOraclePage
		contains string // the page says this, so an empty page cannot pass
	}
	cases := []tc{{name: "index", got: docsIndexPage(), oracle: docsOraclePage{Title: "Error codes", All: apperr.Catalogue()},
		contains: `<a href="/docs/errors/rate_limited"><code>rate_limited</code></a>`}}
	for _, d := range apperr.Catalogue() {
		cases = append(cases, tc{name: string(d.Code), got: docsCodeHTML(d), oracle: docsOraclePage{Title: string(d.Code), Doc: &d}, contains: "<b>" + strconv.Itoa(d.Status) + "</b>"})
	}
	for _, code := range []string{"made_up_by_a_fault", "x", "a0123456789_", "abcdefghijklmnopqrstuvwxyz_0123456789", strings.Repeat("z", 64)} {
		if !fault.ValidCode(code) {
			t.Fatalf("%q is not a valid code", code)
		}
		cases = append(cases, tc{name: "unknown " + code, got: docsUnknownHTML(code), oracle: docsOraclePage{Title: code, Code: code}, contains: "<h1><code>" + code + "</code></h1>"})
	}
	// Escaping, beyond what the routes let through: ValidCode allows nothing that HTML
	// escapes, but a catalogue entry's meaning and service are free text.
	odd := apperr.Doc{Code: apperr.Code("odd_" + "code"), Status: 418, Service: hostile, Meaning: hostile}
	cases = append(cases,
		tc{name: "escaped entry", got: docsCodeHTML(odd), oracle: docsOraclePage{Title: string(odd.Code), Doc: &odd}, contains: "&lt;script&gt;&#34;a&#34; &amp; &#39;b&#39; &#43; c"},
		tc{name: "escaped index", got: docsIndexHTML([]apperr.Doc{odd, {Code: "abcdefghijklmnopqrstuvwxyz_0123456789", Status: 599, Service: "any", Meaning: "m"}}),
			oracle: docsOraclePage{Title: "Error codes", All: []apperr.Doc{odd, {Code: "abcdefghijklmnopqrstuvwxyz_0123456789", Status: 599, Service: "any", Meaning: "m"}}}, contains: "\uFFFD"},
		tc{name: "escaped unknown code", got: docsUnknownHTML(hostile), oracle: docsOraclePage{Title: hostile, Code: hostile}, contains: "&#43;"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := renderDocsOracle(t, c.oracle)
			if !bytes.Equal(c.got, want) {
				t.Errorf("the page differs from the template's:\ngot:\n%s\nwant:\n%s", c.got, want)
			}
			if !bytes.Contains(c.got, []byte(c.contains)) {
				t.Errorf("the page does not contain %q:\n%s", c.contains, c.got)
			}
		})
	}
}

// TestCatalogueCodesAreValid: docsIndexHTML puts a code into a link unescaped, which is
// right only for codes fault.ValidCode accepts (snake_case: nothing a URL or HTML escapes).
func TestCatalogueCodesAreValid(t *testing.T) {
	for _, d := range apperr.Catalogue() {
		if !fault.ValidCode(string(d.Code)) {
			t.Errorf("catalogue code %q is not a valid code (fault.ValidCode)", d.Code)
		}
	}
}
