// Package scenarios holds the scenario files built into hostemu: default, instant,
// failing-builds, slow-dns, flaky, rate-limited and strict-uploads. The scenario package parses them;
// --scenarios DIR adds to them or overrides them by name.
package scenarios

import "embed"

// FS is the built-in scenario files, *.yaml at its root.
//
//go:embed *.yaml
var FS embed.FS
