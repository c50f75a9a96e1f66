package apperr

import (
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Doc is one entry of the error catalogue: its status and what it means.
type Doc struct {
	Code    Code
	Status  int
	Service string // hosting, cipher, control, or any
	Meaning string
}

// catalogue is every error code hostemu can return, in one place. The first "any" code
// of a status by code (ForStatus) is what a fault giving only that status answers with.
var catalogue = []Doc{
	{InvalidRequest, 400, "any", "A field is missing, has the wrong type, or has a value outside its rules; the message names it. Also a bad query parameter."},
	{InvalidJSON, 400, "any", "The request body is not valid JSON."},
	{InvalidCursor, 400, "hosting", "The cursor is malformed, forged, or from another list."},
	{InvalidHostname, 400, "hosting", "The hostname (or redirect_to) is not a fully qualified domain name, optionally with one leading `*.` label."},
	{MissingFiles, 400, "hosting", "With strict uploads, some file hashes of the deployment were never uploaded; the error object's `missing` array lists them. Upload them with POST /v1/files."},
	{DigestMismatch, 400, "hosting", "The uploaded bytes do not hash to the X-File-Digest header (or the header is not 64 lowercase hex characters)."},
	{InvalidEnvelope, 400, "cipher", "The envelope is malformed, truncated, extended or tampered with. The message is the same whatever part is wrong."},
	{KeyNotFound, 400, "cipher", "The envelope names a master key that this emulator does not hold."},
	{InvalidToken, 401, "any", "The bearer token is unknown, revoked or malformed."},
	{MissingToken, 401, "any", "No Authorization header with a bearer token was sent."},
	{InsufficientScope, 403, "hosting", "The token's scope does not allow this operation; the message names the scope needed."},
	{ForbiddenOrigin, 403, "control", "The control API refuses requests from a web page of another origin (the Origin header, or Sec-Fetch-Site for requests without one), so a page open in your browser cannot read or change the emulator. Allow an origin with --control-origins."},
	{ForbiddenHost, 403, "control", "While hostemu listens on loopback only, control requests must name localhost, a loopback address (127.0.0.1, [::1]) or the host of --public-url, never a *.localhost name (the edge serves pages there): a DNS-rebinding page cannot reach them."},
	{NotFound, 404, "any", "No such route."},
	{DeploymentNotFound, 404, "hosting", "No deployment has this id."},
	{ProjectNotFound, 404, "hosting", "No project has this id (in the path, the body or the query)."},
	{DomainNotFound, 404, "hosting", "The project has no domain with this hostname."},
	{ScenarioNotFound, 404, "control", "No scenario has this name."},
	{FaultNotFound, 404, "control", "No fault has this id: it was never added, or it was removed or gone with a reset (DELETE finds only API-added faults; GET also the active scenario's)."},
	{TokenNotFound, 404, "control", "No hosting token to revoke has this value."},
	{MethodNotAllowed, 405, "any", "The route exists but not with this method; the Allow header lists the methods it has."},
	{AwaitTimeout, 408, "control", "The awaited condition did not hold within the timeout."},
	{NamespaceNotFound, 404, "control", "No namespace has this id: it was never created, or it was deleted or expired (unused for --namespace-ttl). Also an edge request or a CONNECT naming such a namespace by X-Hostemu-Namespace or proxy credentials."},
	{NamespaceLimit, 429, "control", "As many namespaces live as --max-namespaces allows; delete one (DELETE /_emulator/namespaces/{ns}) or wait for idle ones to expire."},
	{DeploymentNotReady, 409, "hosting", "Only a ready deployment can be promoted."},
	{DomainAlreadyExists, 409, "hosting", "The hostname is already attached to a project."},
	{PayloadTooLarge, 413, "any", "The body is over the limit: 1 MiB of JSON for the hosting service, 32 MiB for POST /v1/files, 2 MiB for the decryption service, 1 MiB of payload for /v1/encrypt."},
	{UnsupportedMediaType, 415, "any", "A body was sent with a Content-Type other than application/json."},
	{RateLimited, 429, "any", "A rate limit is exhausted; Retry-After says in how many seconds to try again."},
	{InternalError, 500, "any", "hostemu failed; the log has the details. Please report it."},
	{StorageFull, 507, "hosting", "POST /v1/files: the file store is full (--file-store-size, 256 MiB by default); nothing of this file was stored."},
	{UnknownHost, 404, "edge", "No deployment or custom domain answers at this host (a deleted domain once its detachment is complete). To a proxy request for a host hostemu does not emulate the status is 403: it never leaves the machine."},
	{DeploymentBuilding, 503, "edge", "The deployment is still queued or building; Retry-After says when to look again."},
	{DeploymentFailed, 502, "edge", "The deployment's build failed before it was ever ready, so there is nothing to serve."},
	{NoProductionDeployment, 404, "edge", "The custom domain is active but its project has no production deployment yet: promote one."},
	{DomainNotActive, 421, "edge", "The custom domain is not active (pending, verifying or error), so the edge does not serve it yet."},
	{RangeNotSatisfiable, 416, "edge", "The Range header selects no byte of the file (every range starts at or past its end, or is empty, or does not parse); Content-Range: bytes */size gives the file's size where the ranges parsed."},
	{ServiceUnavailable, 503, "any", "The service is unavailable (usually an injected fault)."},
}

var byCode = func() map[Code]Doc {
	m := make(map[Code]Doc, len(catalogue))
	for _, d := range catalogue {
		m[d.Code] = d
	}
	return m
}()

// Catalogue returns the error catalogue sorted by status, then code.
func Catalogue() []Doc {
	out := append([]Doc(nil), catalogue...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Status != out[j].Status {
			return out[i].Status < out[j].Status
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// Lookup is the catalogue's entry for code.
func Lookup(code Code) (Doc, bool) {
	d, ok := byCode[code]
	return d, ok
}

// Status is the HTTP status of a catalogue code (500 for a code not in it: a bug, which
// TestEveryCodeIsCatalogued guards against). It is the one table from code to status,
// for the APIs and the edge alike.
func Status(code Code) int {
	if d, ok := byCode[code]; ok {
		return d.Status
	}
	return http.StatusInternalServerError
}

// ForStatus is the code a fault that gives only a status answers with: the
// catalogue's public code for it (the first of its "any" codes in Catalogue's order,
// by code: 400 is invalid_json, as it has always been), else the status text in
// snake_case (408 request_timeout, 502 bad_gateway), which gets a docs page saying it
// was injected.
func ForStatus(status int) string {
	var first Code
	for _, d := range catalogue {
		if d.Status == status && d.Service == "any" && (first == "" || d.Code < first) {
			first = d.Code
		}
	}
	if first != "" {
		return string(first)
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

// journalOnly are the codes a journal entry carries for a request no answer reached:
// one a fault dropped, or held until the client gave up.
var journalOnly = []string{"dropped", "timeout"}

// AnswerCodes are the codes an answer (or a journal entry) can carry whatever faults a
// world holds: the catalogue's, the codes ForStatus gives a fault of only a status
// (400–599), and dropped and timeout. A fault's own code (status with code) may add one.
var AnswerCodes = sync.OnceValue(func() []string {
	var codes CodeSet
	for _, d := range catalogue {
		codes.Add(string(d.Code))
	}
	for status := 400; status <= 599; status++ {
		codes.Add(ForStatus(status))
	}
	for _, c := range journalOnly {
		codes.Add(c)
	}
	return codes.List()
})
