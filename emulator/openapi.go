package emulator

import (
	"io"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// OpenAPICommand is the `hostemu openapi` command: it prints the OpenAPI 3.1
// description of the hosting and decryption services, or with --control the control
// API's, as JSON or YAML (--format), and returns the exit code (2 for a usage error).
// The descriptions are the ones hostemu serves at /openapi.json and
// /_emulator/openapi.json.
func OpenAPICommand(args []string, stdout, stderr io.Writer) int {
	return openapi.Command(args, stdout, stderr)
}
