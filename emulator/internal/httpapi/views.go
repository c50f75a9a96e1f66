package httpapi

import (
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// The JSON shapes the hosting service answers with. Field names are PRODUCT.md's.

type deploymentCreatedView struct {
	ID        string          `json:"id"`
	URL       string          `json:"url"`
	Status    string          `json:"status"`
	CreatedAt state.Timestamp `json:"created_at"`
	ProjectID string          `json:"project_id"`
	Target    string          `json:"target"`
}

type projectView struct {
	ID                     string            `json:"id"`
	Name                   string            `json:"name"`
	CreatedAt              state.Timestamp   `json:"created_at"`
	ProductionDeploymentID *string           `json:"production_deployment_id"`
	Env                    map[string]string `json:"env"`
}

type dnsRecord struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

type domainView struct {
	Hostname   string           `json:"hostname"`
	ProjectID  string           `json:"project_id"`
	Status     string           `json:"status"`
	RedirectTo *string          `json:"redirect_to"`
	CreatedAt  state.Timestamp  `json:"created_at"`
	DNS        []dnsRecord      `json:"dns"`
	TLS        state.TLS        `json:"tls"`
	Error      *state.ErrorInfo `json:"error"`
}

func createdView(d state.Deployment) deploymentCreatedView {
	return deploymentCreatedView{ID: d.ID, URL: d.URL, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt), ProjectID: d.ProjectID, Target: d.Target}
}

func viewProject(p state.Project) projectView {
	v := projectView{ID: p.ID, Name: p.Name, CreatedAt: state.Timestamp(p.CreatedAt), Env: p.Env}
	if p.ProductionDeploymentID != "" {
		id := p.ProductionDeploymentID
		v.ProductionDeploymentID = &id
	}
	if v.Env == nil {
		v.Env = map[string]string{}
	}
	return v
}

func viewDomain(d state.Domain) domainView {
	v := domainView{Hostname: d.Hostname, ProjectID: d.ProjectID, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt),
		DNS: dnsRecords(d.Hostname), TLS: d.TLS, Error: d.Error}
	if d.RedirectTo != "" {
		r := d.RedirectTo
		v.RedirectTo = &r
	}
	return v
}

// dnsRecords are the A and AAAA records a user must set for hostname: the name relative
// to the apex ("@", "www", "*"), the values from the documentation address ranges,
// stable for a hostname.
func dnsRecords(hostname string) []dnsRecord {
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
	return []dnsRecord{
		{Type: "A", Name: name, Value: v4},
		{Type: "AAAA", Name: name, Value: netip.AddrFrom16(v6).String()},
	}
}

type listProjectsResponse struct {
	Projects   []projectView `json:"projects"`
	NextCursor *string       `json:"next_cursor"`
}

type listDomainsResponse struct {
	Domains    []domainView `json:"domains"`
	NextCursor *string      `json:"next_cursor"`
}

type logsResponse struct {
	Logs       []state.LogLine `json:"logs"`
	NextCursor *string         `json:"next_cursor"`
}

type promoteResponse struct {
	ProjectID              string  `json:"project_id"`
	ProductionDeploymentID string  `json:"production_deployment_id"`
	PreviousDeploymentID   *string `json:"previous_deployment_id"`
}

type deleteDomainResponse struct {
	Hostname string `json:"hostname"`
	Deleted  bool   `json:"deleted"`
}

type uploadResponse struct {
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}
