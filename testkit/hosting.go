package testkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/hostemu/hostemu/emulator"
)

// Hosting is a small typed client of the hosting API, for tests that need one more than
// they test one: create, read and list deployments, promote, upload files, manage
// domains. It sends the emulator's admin token (every scope) unless As says otherwise.
// A failure stops the test with the emulator's code and message; Try gives the error
// back instead, for a test that expects one (errors.As to *APIError).
type Hosting struct {
	e     *Emulator
	token string
	try   bool
	err   *error
}

// Hosting is this emulator's hosting API client.
func (e *Emulator) Hosting() *Hosting { return &Hosting{e: e, token: e.r.tokens.Admin} }

// As is h sending token (a read or deploy token, or one of your own) instead.
func (h *Hosting) As(token string) *Hosting { c := *h; c.token = token; return &c }

// Try runs fn with a client whose calls do not stop the test: the first call's error
// (nil when all succeeded) is returned, and the calls after it are not made (they
// return zero values).
func (h *Hosting) Try(fn func(h *Hosting)) error {
	var err error
	c := *h
	c.try, c.err = true, &err
	fn(&c)
	return err
}

// NewDeployment is what CreateDeployment sends (POST /v1/deployments).
type NewDeployment struct {
	ProjectID string            `json:"project_id"`
	Files     map[string]string `json:"files"`
	Target    string            `json:"target,omitempty"` // "preview" when empty
	Env       map[string]string `json:"env,omitempty"`
}

// CreateDeployment creates a deployment; it starts queued.
func (h *Hosting) CreateDeployment(d NewDeployment) emulator.DeploymentCreated {
	h.e.tb.Helper()
	if d.Files == nil {
		d.Files = map[string]string{}
	}
	var out emulator.DeploymentCreated
	h.call(http.MethodPost, "/v1/deployments", d, &out)
	return out
}

// Deployment is GET /v1/deployments/{id}.
func (h *Hosting) Deployment(id string) emulator.Deployment {
	h.e.tb.Helper()
	var out emulator.Deployment
	h.call(http.MethodGet, "/v1/deployments/"+url.PathEscape(id), nil, &out)
	return out
}

// Deployments is one page of GET /v1/deployments with query (project_id, target,
// status, limit, cursor…; nil for the first page of all).
func (h *Hosting) Deployments(query url.Values) emulator.DeploymentList {
	h.e.tb.Helper()
	var out emulator.DeploymentList
	h.call(http.MethodGet, withQuery("/v1/deployments", query), nil, &out)
	return out
}

// Logs is the first page of a deployment's build logs.
func (h *Hosting) Logs(id string) emulator.LogPage {
	h.e.tb.Helper()
	var out emulator.LogPage
	h.call(http.MethodGet, "/v1/deployments/"+url.PathEscape(id)+"/logs", nil, &out)
	return out
}

// Promote makes a ready deployment its project's production deployment (a roll back
// when it is older than the current one).
func (h *Hosting) Promote(id string) emulator.Promotion {
	h.e.tb.Helper()
	var out emulator.Promotion
	h.call(http.MethodPost, "/v1/deployments/"+url.PathEscape(id)+"/promote", nil, &out)
	return out
}

// UploadFile uploads content (POST /v1/files) and returns its SHA-256, the hash a
// deployment's files map names it by.
func (h *Hosting) UploadFile(content []byte) string {
	h.e.tb.Helper()
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	h.do(http.MethodPost, "/v1/files", content, http.Header{"X-File-Digest": {digest}, "Content-Type": {"application/octet-stream"}}, nil)
	return digest
}

// Projects is the first page of GET /v1/projects.
func (h *Hosting) Projects() emulator.ProjectList {
	h.e.tb.Helper()
	var out emulator.ProjectList
	h.call(http.MethodGet, "/v1/projects", nil, &out)
	return out
}

// AddDomain attaches hostname to a project; it starts pending.
func (h *Hosting) AddDomain(projectID, hostname string) emulator.Domain {
	h.e.tb.Helper()
	var out emulator.Domain
	h.call(http.MethodPost, "/v1/projects/"+url.PathEscape(projectID)+"/domains", map[string]string{"hostname": hostname}, &out)
	return out
}

// Domains is the first page of a project's domains.
func (h *Hosting) Domains(projectID string) emulator.DomainList {
	h.e.tb.Helper()
	var out emulator.DomainList
	h.call(http.MethodGet, "/v1/projects/"+url.PathEscape(projectID)+"/domains", nil, &out)
	return out
}

// DeleteDomain detaches hostname from a project.
func (h *Hosting) DeleteDomain(projectID, hostname string) emulator.DomainDeleted {
	h.e.tb.Helper()
	var out emulator.DomainDeleted
	h.call(http.MethodDelete, "/v1/projects/"+url.PathEscape(projectID)+"/domains/"+url.PathEscape(hostname), nil, &out)
	return out
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// call sends body as JSON (nil: none) and decodes a 2xx answer into out.
func (h *Hosting) call(method, path string, body, out any) {
	h.e.tb.Helper()
	var raw []byte
	var header http.Header
	if body != nil {
		raw, _ = json.Marshal(body) // plain data: always encodes
		header = http.Header{"Content-Type": {"application/json"}}
	}
	h.do(method, path, raw, header, out)
}

func (h *Hosting) do(method, path string, body []byte, header http.Header, out any) {
	h.e.tb.Helper()
	if h.try && *h.err != nil {
		return // a Try stops at its first error
	}
	err := h.send(method, path, body, header, out)
	switch {
	case err == nil:
	case h.try:
		*h.err = err
	default:
		h.e.tb.Fatalf("testkit: %s %s: %v", method, path, err)
	}
}

func (h *Hosting) send(method, path string, body []byte, header http.Header, out any) error {
	if header == nil {
		header = http.Header{}
	}
	if h.token != "" {
		header.Set("Authorization", "Bearer "+h.token)
	}
	_, err := exchange(context.Background(), h.e.r.client, method, h.e.r.url+path, body, header, 64<<20, out)
	return err
}
