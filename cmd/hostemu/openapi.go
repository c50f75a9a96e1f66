package main

import (
	"io"

	"github.com/hostemu/hostemu/emulator"
)

// openapiCommand is `hostemu openapi [--control] [--format json|yaml]`: the descriptions
// live in the emulator (emulator.OpenAPICommand), which serves the same documents.
func openapiCommand(args []string, stdout, stderr io.Writer) int {
	return emulator.OpenAPICommand(args, stdout, stderr)
}
