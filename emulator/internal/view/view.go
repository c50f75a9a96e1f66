// Package view holds the JSON shapes hostemu answers with, the one definition of each:
// the HTTP layer renders them (the full deployment by hand, byte for byte what
// encoding/json writes for Deployment), and tests and testkit decode into them.
package view

import (
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// DeploymentCreated is the answer to POST /v1/deployments.
type DeploymentCreated struct {
	ID        string          `json:"id"`
	URL       string          `json:"url"`
	Status    string          `json:"status"`
	CreatedAt state.Timestamp `json:"created_at"`
	ProjectID string          `json:"project_id"`
	Target    string          `json:"target"`
}

// Project is a project as GET /v1/projects lists it.
type Project struct {
	ID                     string            `json:"id"`
	Name                   string            `json:"name"`
	CreatedAt              state.Timestamp   `json:"created_at"`
	ProductionDeploymentID *string           `json:"production_deployment_id"`
	Env                    map[string]string `json:"env"`
}

// DNSRecord is one record a user must set for a domain.
type DNSRecord struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Domain is a custom domain as the API answers it.
type Domain struct {
	Hostname   string           `json:"hostname"`
	ProjectID  string           `json:"project_id"`
	Status     string           `json:"status"`
	RedirectTo *string          `json:"redirect_to"`
	CreatedAt  state.Timestamp  `json:"created_at"`
	DNS        []DNSRecord      `json:"dns"`
	TLS        state.TLS        `json:"tls"`
	Error      *state.ErrorInfo `json:"error"`
}

// Created is the create answer of a deployment.
func Created(d state.Deployment) DeploymentCreated {
	return DeploymentCreated{ID: d.ID, URL: d.URL, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt), ProjectID: d.ProjectID, Target: d.Target}
}

// ProjectOf is a project's view.
func ProjectOf(p state.Project) Project {
	v := Project{ID: p.ID, Name: p.Name, CreatedAt: state.Timestamp(p.CreatedAt), Env: p.Env}
	if p.ProductionDeploymentID != "" {
		id := p.ProductionDeploymentID
		v.ProductionDeploymentID = &id
	}
	if v.Env == nil {
		v.Env = map[string]string{}
	}
	return v
}

// DomainOf is a domain's view.
func DomainOf(d state.Domain) Domain {
	v := Domain{Hostname: d.Hostname, ProjectID: d.ProjectID, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt),
		DNS: DNSRecords(d.Hostname), TLS: d.TLS, Error: d.Error}
	if d.RedirectTo != "" {
		r := d.RedirectTo
		v.RedirectTo = &r
	}
	return v
}

// DNSRecords are the A and AAAA records a user must set for hostname: the name relative
// to the apex ("@", "www", "*"), the values from the documentation address ranges,
// stable for a hostname.
func DNSRecords(hostname string) []DNSRecord {
	apex := state.Apex(hostname)
	name := "@"
	if hostname != apex {
		name = strings.TrimSuffix(hostname, "."+apex)
	}
	h := fnv.New32a()
	h.Write([]byte(hostname))
	sum := h.Sum32()
	v4 := [...]string{"192.0.2.", "198.51.100.", "203.0.113."}[sum%3] + strconv.Itoa(int(sum>>8%254)+1)
	var v6 [16]byte
	copy(v6[:], []byte{0x20, 0x01, 0x0d, 0xb8})
	v6[14], v6[15] = byte(sum>>16), byte(sum>>24)|1
	return []DNSRecord{
		{Type: "A", Name: name, Value: v4},
		{Type: "AAAA", Name: name, Value: netip.AddrFrom16(v6).String()},
	}
}

// ProjectList is a page of GET /v1/projects.
type ProjectList struct {
	Projects   []Project `json:"projects"`
	NextCursor *string   `json:"next_cursor"`
}

// DomainList is a page of GET /v1/projects/{id}/domains.
type DomainList struct {
	Domains    []Domain `json:"domains"`
	NextCursor *string  `json:"next_cursor"`
}

// LogPage is a page of a deployment's build logs.
type LogPage struct {
	Logs       []state.LogLine `json:"logs"`
	NextCursor *string         `json:"next_cursor"`
}

// Promotion is the answer to POST /v1/deployments/{id}/promote.
type Promotion struct {
	ProjectID              string  `json:"project_id"`
	ProductionDeploymentID string  `json:"production_deployment_id"`
	PreviousDeploymentID   *string `json:"previous_deployment_id"`
}

// DomainDeleted is the answer to DELETE /v1/projects/{id}/domains/{hostname}.
type DomainDeleted struct {
	Hostname string `json:"hostname"`
	Deleted  bool   `json:"deleted"`
}

// Upload is the answer to POST /v1/files.
type Upload struct {
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// Deployment is the full deployment object of GET /v1/deployments/{id} and the lists.
// The HTTP layer writes it by hand on the hot path; this is its shape.
type Deployment struct {
	ID           string            `json:"id"`
	URL          string            `json:"url"`
	Status       string            `json:"status"`
	CreatedAt    state.Timestamp   `json:"created_at"`
	ProjectID    string            `json:"project_id"`
	Target       string            `json:"target"`
	Env          map[string]string `json:"env"`
	Files        map[string]string `json:"files"`
	BuildLogsURL string            `json:"build_logs_url"`
	Timings      state.Timings     `json:"timings"`
	Error        *state.ErrorInfo  `json:"error"`
	Production   bool              `json:"production"`
}

// DeploymentList is a page of GET /v1/deployments.
type DeploymentList struct {
	Deployments []Deployment `json:"deployments"`
	NextCursor  *string      `json:"next_cursor"`
}
