package scenario

import "io/fs"

// NewRegistryOver is NewRegistry over the built-ins of fsys rather than the embedded
// ones, so that a test outside the package can start a world on a broken built-in.
func NewRegistryOver(fsys fs.FS) (*Registry, error) { return newRegistry(newBuiltinSet(fsys)) }
