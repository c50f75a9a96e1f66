// Package dashboard holds the web pages hostemu serves from its binary: the landing
// page (/), the dashboard (/dashboard) and the tokens page (/account/tokens). They are
// plain HTML, CSS and JavaScript modules with nothing from another origin; everything
// they show comes from the control API.
//
// The pages' HTML is written in templates/ (layout.html is the head, navigation and
// token dialog every page starts with) and rendered, with each page's title, into
// static/index.html, static/dashboard.html and static/tokens.html by
// `go generate ./emulator/internal/dashboard/`; the rendered pages are checked in and
// served as they are. Edit the templates, never the rendered pages:
// TestPagesAreRendered fails while the two differ. Rendering at build time rather than
// at start keeps html/template out of the binary: a reachable template execution makes
// the linker keep every exported method of every reachable type (issue #38), which
// TestBinary (emulator/cli, "no template execution linked") fails on.
package dashboard

import (
	"embed"
	"io/fs"
)

//go:generate go test -run ^TestPagesAreRendered$ -update .

//go:embed static
var static embed.FS

// Files is the pages and their assets, by file name (index.html, dashboard.js, …).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}
