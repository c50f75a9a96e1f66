// Package dashboard holds the web pages hostemu serves from its binary: the landing
// page (/), the dashboard (/dashboard) and the tokens page (/account/tokens). They are
// plain HTML, CSS and JavaScript modules with no build step and nothing from another
// origin; everything they show comes from the control API.
package dashboard

import (
	"embed"
	"io/fs"
)

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
