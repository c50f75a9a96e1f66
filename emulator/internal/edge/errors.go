package edge

import (
	"encoding/json"
	"html"
	"net/http"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// Edge error codes: catalogue codes (apperr), whose statuses the catalogue holds like
// every other code's.
const (
	CodeUnknownHost            = string(apperr.UnknownHost)
	CodeDeploymentNotFound     = string(apperr.DeploymentNotFound)
	CodeDeploymentBuilding     = string(apperr.DeploymentBuilding)
	CodeDeploymentFailed       = string(apperr.DeploymentFailed)
	CodeNoProductionDeployment = string(apperr.NoProductionDeployment)
	CodeDomainNotActive        = string(apperr.DomainNotActive)
	CodeNotFound               = string(apperr.NotFound)
	CodeMethodNotAllowed       = string(apperr.MethodNotAllowed)
	CodeNamespaceNotFound      = string(apperr.NamespaceNotFound)
	CodeRangeNotSatisfiable    = string(apperr.RangeNotSatisfiable)
)

// Status returns the HTTP status of an edge error code, from the catalogue; proxy
// matters only for unknown_host, refused with 403 so that a proxy request never reaches
// the internet.
func Status(code string, proxy bool) int {
	if proxy && code == CodeUnknownHost {
		return http.StatusForbidden
	}
	return apperr.Status(apperr.Code(code))
}

// failure is the error an edge decision or a file lookup answers with; code is one of
// the Code constants above, so a catalogue code.
func failure(code string, d Decision) *apperr.Error {
	return &apperr.Error{Code: apperr.Code(code), Message: message(code, d)}
}

// Message says what went wrong, for an error decision.
func (d Decision) Message() string { return message(d.Code, d) }

// message says what went wrong, naming the host or deployment concerned.
func message(code string, d Decision) string {
	switch code {
	case CodeUnknownHost:
		if d.NotVouched {
			return "the proxy serves " + strconv.Quote(d.Host) + " only when --proxy-domains lists it: it is a real name, and hostemu's CA would vouch for it to every client of the proxy"
		}
		if d.Proxy {
			return "hostemu does not emulate " + strconv.Quote(d.Host) + "; proxy requests never leave this machine"
		}
		return "no deployment or domain is attached at " + strconv.Quote(d.Host)
	case CodeDeploymentNotFound:
		return "no deployment is served at " + strconv.Quote(d.Host)
	case CodeDeploymentBuilding:
		return "deployment " + d.Deployment.ID + " is " + d.Deployment.Status + "; it is served once ready"
	case CodeDeploymentFailed:
		return "deployment " + d.Deployment.ID + " failed before it was ready"
	case CodeNoProductionDeployment:
		return "the project of " + strconv.Quote(d.Domain) + " has no production deployment; promote one"
	case CodeDomainNotActive:
		return "domain " + strconv.Quote(d.Domain) + " is not active yet"
	case CodeMethodNotAllowed:
		return "a deployment's files answer GET and HEAD only"
	case CodeNamespaceNotFound:
		return "no namespace " + strconv.Quote(d.Namespace) + " (named by X-Hostemu-Namespace or Proxy-Authorization): never created, deleted, or expired unused"
	}
	return "deployment " + d.Deployment.ID + " has no file for this path"
}

type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	DocURL  string `json:"doc_url"`
}

// WriteError answers an edge error: the JSON envelope when the request prefers JSON, a
// small HTML page otherwise; never cached, since the next answer may differ.
func WriteError(w http.ResponseWriter, r *http.Request, status int, code, msg, docURL string) {
	h := w.Header()
	h["X-Hostemu-Error"] = []string{code}
	h["Cache-Control"] = []string{"no-store"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	var body []byte
	if PrefersJSON(r.Header.Get("Accept")) {
		h["Content-Type"] = []string{"application/json"}
		body, _ = json.Marshal(envelope{envelopeError{Code: code, Message: msg, DocURL: docURL}})
		body = append(body, '\n')
	} else {
		h["Content-Type"] = []string{"text/html; charset=utf-8"}
		body = errorPage(status, code, msg, docURL)
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func errorPage(status int, code, msg, docURL string) []byte {
	var b strings.Builder
	title := strconv.Itoa(status) + " " + code
	b.WriteString("<!doctype html>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(title)
	b.WriteString("</title>\n<h1>")
	b.WriteString(title)
	b.WriteString("</h1>\n<p>")
	b.WriteString(html.EscapeString(msg))
	b.WriteString("</p>\n")
	if docURL != "" {
		b.WriteString("<p><a href=\"")
		b.WriteString(html.EscapeString(docURL))
		b.WriteString("\">What this means</a></p>\n")
	}
	b.WriteString("<p><small>hostemu edge</small></p>\n")
	return []byte(b.String())
}
