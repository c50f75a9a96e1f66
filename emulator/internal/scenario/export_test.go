package scenario

import "io/fs"

// NewRegistryOver is NewRegistry over the built-ins of fsys rather than the embedded
// ones, so that a test outside the package can start a world on a broken built-in.
func NewRegistryOver(fsys fs.FS) (*Registry, error) { return newRegistry(newBuiltinSet(fsys)) }

// BuiltinParses is how many built-in files r's set has parsed, so that a test outside
// the package counts what a caller parses (as TestBuiltinsParseOnFirstUse does inside).
func (r *Registry) BuiltinParses() int32 { return r.builtins.parses.Load() }
