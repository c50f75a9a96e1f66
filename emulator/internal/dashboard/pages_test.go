package dashboard

import (
	"bytes"
	"flag"
	"html/template"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "render templates/ into the pages under static/")

// pages are the pages rendered from templates/: each starts with the "top" template
// (layout.html) filled with its title and which navigation link is the current page.
var pages = map[string]struct{ Title, Page string }{
	"index.html":     {Title: "hostemu", Page: "home"},
	"dashboard.html": {Title: "Dashboard", Page: "dashboard"},
	"tokens.html":    {Title: "Tokens", Page: "tokens"},
}

// TestPagesAreRendered holds the pages under static/ to what the templates render: an
// edit of a template without `go generate ./emulator/internal/dashboard/` (or of a
// rendered page instead of its template) fails here, naming the command.
func TestPagesAreRendered(t *testing.T) {
	tmpl := template.Must(template.ParseFS(os.DirFS("templates"), "*.html"))
	for name, data := range pages {
		var want bytes.Buffer
		if err := tmpl.ExecuteTemplate(&want, name, data); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("static", name)
		if *update {
			if err := os.WriteFile(file, want.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want.Bytes()) {
			t.Errorf("%s is not what templates/%s renders: run `go generate ./emulator/internal/dashboard/`", file, name)
		}
	}
	// every page under static/ is rendered from a template: none is left over from a
	// template since removed
	rendered, err := filepath.Glob(filepath.Join("static", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range rendered {
		if _, ok := pages[filepath.Base(file)]; !ok {
			t.Errorf("%s is not rendered from a template (pages in pages_test.go)", file)
		}
	}
}
