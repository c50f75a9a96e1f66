// Package httpapi is hostemu's HTTP face: the hosting service, the decryption service,
// the control API and the error-code docs, on gin. It is the only package that knows
// HTTP statuses; the world and state packages speak in error codes.
package httpapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// ErrorDoc is one entry of the error catalogue: its status and what it means.
type ErrorDoc struct {
	Code    apperr.Code
	Status  int
	Service string // hosting, cipher, control, or any
	Meaning string
}

// catalogue is every error code hostemu can return, in one place. The first "any" code
// of a status is what a fault giving only that status answers with.
var catalogue = []ErrorDoc{
	{apperr.InvalidRequest, 400, "any", "A field is missing, has the wrong type, or has a value outside its rules; the message names it. Also a bad query parameter."},
	{apperr.InvalidJSON, 400, "any", "The request body is not valid JSON."},
	{apperr.InvalidCursor, 400, "hosting", "The cursor is malformed, forged, or from another list."},
	{apperr.InvalidHostname, 400, "hosting", "The hostname (or redirect_to) is not a fully qualified domain name, optionally with one leading `*.` label."},
	{apperr.MissingFiles, 400, "hosting", "With strict uploads, some file hashes of the deployment were never uploaded; the error object's `missing` array lists them. Upload them with POST /v1/files."},
	{apperr.DigestMismatch, 400, "hosting", "The uploaded bytes do not hash to the X-File-Digest header (or the header is not 64 lowercase hex characters)."},
	{apperr.InvalidEnvelope, 400, "cipher", "The envelope is malformed, truncated, extended or tampered with. The message is the same whatever part is wrong."},
	{apperr.KeyNotFound, 400, "cipher", "The envelope names a master key that this emulator does not hold."},
	{apperr.InvalidToken, 401, "any", "The bearer token is unknown, revoked or malformed."},
	{apperr.MissingToken, 401, "any", "No Authorization header with a bearer token was sent."},
	{apperr.InsufficientScope, 403, "hosting", "The token's scope does not allow this operation; the message names the scope needed."},
	{apperr.ForbiddenOrigin, 403, "control", "The control API refuses requests from a web page of another origin (the Origin header, or Sec-Fetch-Site for requests without one), so a page open in your browser cannot read or change the emulator. Allow an origin with --control-origins."},
	{apperr.ForbiddenHost, 403, "control", "While hostemu listens on loopback only, control requests must name a loopback host (localhost, *.localhost, 127.0.0.1, [::1]) or the host of --public-url: a DNS-rebinding page cannot reach them."},
	{apperr.NotFound, 404, "any", "No such route."},
	{apperr.DeploymentNotFound, 404, "hosting", "No deployment has this id."},
	{apperr.ProjectNotFound, 404, "hosting", "No project has this id (in the path, the body or the query)."},
	{apperr.DomainNotFound, 404, "hosting", "The project has no domain with this hostname."},
	{apperr.ScenarioNotFound, 404, "control", "No scenario has this name."},
	{apperr.FaultNotFound, 404, "control", "No API-added fault has this id."},
	{apperr.TokenNotFound, 404, "control", "No hosting token to revoke has this value."},
	{apperr.MethodNotAllowed, 405, "any", "The route exists but not with this method; the Allow header lists the methods it has."},
	{apperr.AwaitTimeout, 408, "control", "The awaited condition did not hold within the timeout."},
	{apperr.NamespaceNotFound, 404, "control", "No namespace has this id: it was never created, or it was deleted or expired (unused for --namespace-ttl)."},
	{apperr.NamespaceLimit, 429, "control", "As many namespaces live as --max-namespaces allows; delete one (DELETE /_emulator/namespaces/{ns}) or wait for idle ones to expire."},
	{apperr.DeploymentNotReady, 409, "hosting", "Only a ready deployment can be promoted."},
	{apperr.DomainAlreadyExists, 409, "hosting", "The hostname is already attached to a project."},
	{apperr.PayloadTooLarge, 413, "any", "The body is over the limit: 1 MiB of JSON for the hosting service, 32 MiB for POST /v1/files, 2 MiB for the decryption service, 1 MiB of payload for /v1/encrypt."},
	{apperr.UnsupportedMediaType, 415, "any", "A body was sent with a Content-Type other than application/json."},
	{apperr.RateLimited, 429, "any", "A rate limit is exhausted; Retry-After says in how many seconds to try again."},
	{apperr.InternalError, 500, "any", "hostemu failed; the log has the details. Please report it."},
	{apperr.StorageFull, 507, "hosting", "POST /v1/files: the file store is full (--file-store-size, 256 MiB by default); nothing of this file was stored."},
	{apperr.UnknownHost, 404, "edge", "No deployment or custom domain answers at this host (a deleted domain once its detachment is complete). To a proxy request for a host hostemu does not emulate the status is 403: it never leaves the machine."},
	{apperr.DeploymentBuilding, 503, "edge", "The deployment is still queued or building; Retry-After says when to look again."},
	{apperr.DeploymentFailed, 502, "edge", "The deployment's build failed before it was ever ready, so there is nothing to serve."},
	{apperr.NoProductionDeployment, 404, "edge", "The custom domain is active but its project has no production deployment yet: promote one."},
	{apperr.DomainNotActive, 421, "edge", "The custom domain is not active (pending, verifying or error), so the edge does not serve it yet."},
	{apperr.ServiceUnavailable, 503, "any", "The service is unavailable (usually an injected fault)."},
}

var byCode = func() map[apperr.Code]ErrorDoc {
	m := make(map[apperr.Code]ErrorDoc, len(catalogue))
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

// statusOf is the HTTP status of a catalogue code (500 for a code not in it: a bug,
// which TestEveryCodeIsCatalogued guards against).
func statusOf(code apperr.Code) int {
	if d, ok := byCode[code]; ok {
		return d.Status
	}
	return http.StatusInternalServerError
}

// toAppError is what the client sees of err: its *apperr.Error, or for any other error
// a generic internal_error (reported false, so the caller logs the details).
func toAppError(err error) (*apperr.Error, bool) {
	if e, ok := apperr.As(err); ok {
		return e, true
	}
	return apperr.New(apperr.InternalError, "internal error; see the emulator's log"), false
}
