package state

import "fmt"

// Error codes returned by the state package. httpapi maps them to statuses.
const (
	CodeInvalidRequest      = "invalid_request"
	CodeInvalidCursor       = "invalid_cursor"
	CodeInvalidHostname     = "invalid_hostname"
	CodeMissingFiles        = "missing_files"
	CodeDeploymentNotFound  = "deployment_not_found"
	CodeProjectNotFound     = "project_not_found"
	CodeDomainNotFound      = "domain_not_found"
	CodeDeploymentNotReady  = "deployment_not_ready"
	CodeDomainAlreadyExists = "domain_already_exists"
)

// Error is a failure with a catalogue code and a message fit for the client.
type Error struct {
	Code    string
	Message string
	// Missing lists file hashes the service does not hold (missing_files).
	Missing []string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
