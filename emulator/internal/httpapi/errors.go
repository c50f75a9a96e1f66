// Package httpapi is hostemu's HTTP face: the hosting service, the decryption service,
// the control API and the error-code docs, on gin. It is the only package that knows
// HTTP statuses; the world and state packages speak in error codes.
package httpapi

import (
	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// toAppError is what the client sees of err: its *apperr.Error, or for any other error
// a generic internal_error (reported false, so the caller logs the details).
func toAppError(err error) (*apperr.Error, bool) {
	if e, ok := apperr.As(err); ok {
		return e, true
	}
	return apperr.New(apperr.InternalError, "internal error; see the emulator's log"), false
}
