//go:build !linux

package cli

// EndWithGoRun: outside Linux there is no parent-death signal; a go run killed leaves
// its hostemu running (use --watch-stdin from a parent that holds a pipe).
func EndWithGoRun() {}
