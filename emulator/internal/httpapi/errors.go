// Package httpapi is hostemu's HTTP face: the hosting service, the decryption service,
// the control API and the error-code docs, on gin. It is the only package that knows
// HTTP statuses; the world and state packages speak in error codes.
package httpapi

import (
	"net/http"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// codeForStatus is the code a fault that gives only a status answers with: the
// catalogue's public code for it, else the status text in snake_case (408
// request_timeout, 502 bad_gateway), which gets a docs page saying it was injected.
func codeForStatus(status int) string {
	for _, d := range apperr.Catalogue() {
		if d.Status == status && d.Service == "any" {
			return string(d.Code)
		}
	}
	text := strings.ToLower(http.StatusText(status))
	if text == "" {
		if status >= 500 {
			return "server_error"
		}
		return "client_error"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r == ' ' || r == '-':
			return '_'
		}
		return -1
	}, text)
}

// toAppError is what the client sees of err: its *apperr.Error, or for any other error
// a generic internal_error (reported false, so the caller logs the details).
func toAppError(err error) (*apperr.Error, bool) {
	if e, ok := apperr.As(err); ok {
		return e, true
	}
	return apperr.New(apperr.InternalError, "internal error; see the emulator's log"), false
}
