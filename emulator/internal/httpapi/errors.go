// Package httpapi is hostemu's HTTP face: the hosting service, the decryption service,
// the control API and the error-code docs, on gin. It is the only package that knows
// HTTP statuses; the world and state packages speak in error codes.
package httpapi

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/envelope"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// ErrorDoc is one entry of the error catalogue: its status and what it means.
type ErrorDoc struct {
	Code    string
	Status  int
	Service string // hosting, cipher, control, or any
	Meaning string
}

// catalogue is every error code hostemu can return, in one place. The first "any" code
// of a status is what a fault giving only that status answers with.
var catalogue = []ErrorDoc{
	{"invalid_request", 400, "any", "A field is missing, has the wrong type, or has a value outside its rules; the message names it. Also a bad query parameter."},
	{"invalid_json", 400, "any", "The request body is not valid JSON."},
	{"invalid_cursor", 400, "hosting", "The cursor is malformed, forged, or from another list."},
	{"invalid_hostname", 400, "hosting", "The hostname (or redirect_to) is not a fully qualified domain name, optionally with one leading `*.` label."},
	{"missing_files", 400, "hosting", "With strict uploads, some file hashes of the deployment were never uploaded; the error object's `missing` array lists them. Upload them with POST /v1/files."},
	{"digest_mismatch", 400, "hosting", "The uploaded bytes do not hash to the X-File-Digest header (or the header is not 64 lowercase hex characters)."},
	{"invalid_envelope", 400, "cipher", "The envelope is malformed, truncated, extended or tampered with. The message is the same whatever part is wrong."},
	{"key_not_found", 400, "cipher", "The envelope names a master key that this emulator does not hold."},
	{"invalid_token", 401, "any", "The bearer token is unknown, revoked or malformed."},
	{"missing_token", 401, "any", "No Authorization header with a bearer token was sent."},
	{"insufficient_scope", 403, "hosting", "The token's scope does not allow this operation; the message names the scope needed."},
	{"not_found", 404, "any", "No such route."},
	{"deployment_not_found", 404, "hosting", "No deployment has this id."},
	{"project_not_found", 404, "hosting", "No project has this id (in the path, the body or the query)."},
	{"domain_not_found", 404, "hosting", "The project has no domain with this hostname."},
	{"scenario_not_found", 404, "control", "No scenario has this name."},
	{"fault_not_found", 404, "control", "No API-added fault has this id."},
	{"token_not_found", 404, "control", "No hosting token to revoke has this value."},
	{"method_not_allowed", 405, "any", "The route exists but not with this method; the Allow header lists the methods it has."},
	{"await_timeout", 408, "control", "The awaited condition did not hold within the timeout."},
	{"deployment_not_ready", 409, "hosting", "Only a ready deployment can be promoted."},
	{"domain_already_exists", 409, "hosting", "The hostname is already attached to a project."},
	{"payload_too_large", 413, "any", "The body is over the limit: 1 MiB of JSON for the hosting service, 32 MiB for POST /v1/files, 2 MiB for the decryption service, 1 MiB of payload for /v1/encrypt."},
	{"unsupported_media_type", 415, "any", "A body was sent with a Content-Type other than application/json."},
	{"rate_limited", 429, "any", "A rate limit is exhausted; Retry-After says in how many seconds to try again."},
	{"internal_error", 500, "any", "hostemu failed; the log has the details. Please report it."},
	{"service_unavailable", 503, "any", "The service is unavailable (usually an injected fault)."},
}

var byCode = func() map[string]ErrorDoc {
	m := make(map[string]ErrorDoc, len(catalogue))
	for _, d := range catalogue {
		m[d.Code] = d
	}
	return m
}()

// Catalogue returns the error catalogue sorted by status, then code.
func Catalogue() []ErrorDoc {
	out := append([]ErrorDoc(nil), catalogue...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Status != out[j].Status {
			return out[i].Status < out[j].Status
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// codeForStatus is the code a fault that gives only a status answers with: the
// catalogue's public code for it, else the status text in snake_case (408
// request_timeout, 502 bad_gateway), which gets a docs page saying it was injected.
func codeForStatus(status int) string {
	for _, d := range catalogue {
		if d.Status == status && d.Service == "any" {
			return d.Code
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

// apiError is an error answered with the documented envelope.
type apiError struct {
	Status  int
	Code    string
	Message string
	Missing []string // missing_files only
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// newError builds an apiError with the catalogue's status for code.
func newError(code, message string) *apiError {
	st, ok := byCode[code]
	status := st.Status
	if !ok {
		status = http.StatusInternalServerError
	}
	return &apiError{Status: status, Code: code, Message: message}
}

// toAPIError maps any error to what the client sees. Errors without a code are internal:
// the client gets a generic message and the log the details.
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	var se *state.Error
	if errors.As(err, &se) {
		e := newError(se.Code, se.Message)
		e.Missing = se.Missing
		return e, true
	}
	switch {
	case errors.Is(err, envelope.ErrKeyNotFound):
		return newError("key_not_found", "the envelope names a master key this service does not hold"), true
	case errors.Is(err, envelope.ErrNoKeys):
		return newError("service_unavailable", "the decryption service has no master keys (the fixtures have no cipher.master_keys)"), true
	case errors.Is(err, envelope.ErrInvalidEnvelope):
		return newError("invalid_envelope", "the envelope is not valid"), true
	}
	return newError("internal_error", "internal error; see the emulator's log"), false
}
