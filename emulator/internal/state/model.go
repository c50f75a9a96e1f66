// Package state holds one emulated world's resources: projects, deployments, domains,
// tokens, uploaded files and decryption keys, with the indexes the API reads them by.
// It knows nothing of HTTP; its errors carry the catalogue's codes.
//
// A snapshot imported any way (PUT /_emulator/state, a bundle, --state, fixtures) is
// held by Check to what the API would have made: the rules and their words have one
// owner each (EnvProblem, FilesProblem, NormalizeHostname…), which the API answers
// too. Check does not walk a big state's files again: the state reader checks each
// deployment's files as it reads them and leaves its verdict for Check, which checks
// any deployment it did not read (filesread.go).
package state

import "time"

// Scope is a hosting token's permission level.
type Scope string

// The three scopes of the spec, each including the one before it.
const (
	ScopeRead   Scope = "read"
	ScopeDeploy Scope = "deploy"
	ScopeAdmin  Scope = "admin"
)

// ParseScope reads a scope name.
func ParseScope(s string) (Scope, bool) {
	switch Scope(s) {
	case ScopeRead, ScopeDeploy, ScopeAdmin:
		return Scope(s), true
	}
	return "", false
}

// Allows reports whether a token of scope s may do what needs scope need.
func (s Scope) Allows(need Scope) bool { return s.rank() >= need.rank() }

func (s Scope) rank() int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeDeploy:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// Deployment statuses.
const (
	StatusQueued   = "queued"
	StatusBuilding = "building"
	StatusReady    = "ready"
	StatusError    = "error"
)

// Domain statuses (StatusError is shared).
const (
	StatusPending   = "pending"
	StatusVerifying = "verifying"
	StatusActive    = "active"
)

// Certificate statuses.
const (
	TLSPending = "pending"
	TLSIssued  = "issued"
	TLSError   = "error"
)

// Targets of a deployment.
const (
	TargetPreview    = "preview"
	TargetProduction = "production"
)

// The values each of these may take, in lifecycle order: what a refusal lists, or
// names the closest of ("did you mean"). Read them, never modify them.
var (
	Scopes             = []string{string(ScopeRead), string(ScopeDeploy), string(ScopeAdmin)}
	DeploymentStatuses = []string{StatusQueued, StatusBuilding, StatusReady, StatusError}
	DomainStatuses     = []string{StatusPending, StatusVerifying, StatusActive, StatusError}
	TLSStatuses        = []string{TLSPending, TLSIssued, TLSError}
	Targets            = []string{TargetPreview, TargetProduction}
)

// ValidDeploymentStatus reports whether s is one of the spec's deployment statuses.
func ValidDeploymentStatus(s string) bool {
	switch s {
	case StatusQueued, StatusBuilding, StatusReady, StatusError:
		return true
	}
	return false
}

// ValidDomainStatus reports whether s is one of the spec's domain statuses.
func ValidDomainStatus(s string) bool {
	switch s {
	case StatusPending, StatusVerifying, StatusActive, StatusError:
		return true
	}
	return false
}

// Token is a hosting bearer token and its one scope.
type Token struct {
	Token string `json:"token" yaml:"token"`
	Scope Scope  `json:"scope" yaml:"scope"`
}

// Policy holds the emulator's answers to the spec's open permission questions.
type Policy struct {
	// DomainWriteScope is the scope that adds and deletes domains: admin or deploy.
	DomainWriteScope Scope `json:"domain_write_scope"`
}

// MasterKey is a decryption-service master key: 32 bytes, base64 in files.
type MasterKey struct {
	ID  string `json:"id"`
	Key []byte `json:"key"`
}

// Cipher is the decryption service's credentials. The first master key encrypts.
type Cipher struct {
	APIKeys    []string    `json:"api_keys"`
	MasterKeys []MasterKey `json:"master_keys"`
}

// Project is a hosting project. Env is replaced whole (a Load clones it), never written
// in place, so copies share it: a change record's (encoded by the --state log's writer
// after the store's lock is released), ProjectEnv's and every reader's, none of which
// copies it (TestRecordedProjectKeepsItsEnv).
type Project struct {
	ID                     string            `json:"id"`
	Name                   string            `json:"name"`
	CreatedAt              time.Time         `json:"created_at"`
	Env                    map[string]string `json:"env"`
	ProductionDeploymentID string            `json:"production_deployment_id"`
}

// ErrorInfo is why a deployment or domain ended in error.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Timings records when a deployment reached each status; nil until reached.
type Timings struct {
	QueuedAt   *time.Time `json:"queued_at"`
	BuildingAt *time.Time `json:"building_at"`
	ReadyAt    *time.Time `json:"ready_at"`
	ErrorAt    *time.Time `json:"error_at"`
}

// LogLine is one build log line.
type LogLine struct {
	CreatedAt time.Time `json:"created_at"`
	Text      string    `json:"text"`
}

// Deployment is an immutable build of a project. Env holds the deployment's own
// overrides; the merged environment is computed when read. Env and Files are never
// mutated after creation, and Logs is only appended to, so copies may share them.
// Files is never nil in a world (Check refuses it, as the API refuses a create without
// files: FilesProblem); a deployment of no files has {}.
type Deployment struct {
	ID        string            `json:"id"`
	ProjectID string            `json:"project_id"`
	URL       string            `json:"url"`
	Target    string            `json:"target"`
	Status    string            `json:"status"`
	CreatedAt time.Time         `json:"created_at"`
	Env       map[string]string `json:"env"`
	Files     map[string]string `json:"files"`
	Timings   Timings           `json:"timings"`
	Error     *ErrorInfo        `json:"error"`
	Logs      []LogLine         `json:"logs"`
}

// TLS is a domain's certificate.
type TLS struct {
	Status    string     `json:"status"`
	ExpiresAt *time.Time `json:"expires_at"`
	Issuer    *string    `json:"issuer"`
}

// Domain is a custom hostname attached to a project.
type Domain struct {
	Hostname   string     `json:"hostname"`
	ProjectID  string     `json:"project_id"`
	Status     string     `json:"status"`
	RedirectTo string     `json:"redirect_to,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	TLS        TLS        `json:"tls"`
	Error      *ErrorInfo `json:"error"`
}

// Detachment is a deleted domain still being removed from the edge.
type Detachment struct {
	Hostname string    `json:"hostname"`
	DeleteAt time.Time `json:"deleted_at"`
	DetachAt time.Time `json:"detach_at"`
	// Domain is the deleted domain as it was, which the edge keeps serving until
	// DetachAt (nil in states exported before hostemu had an edge).
	Domain *Domain `json:"domain,omitempty"`
}

// Snapshot is a whole world's state: what fixtures produce, what reset restores, and
// what GET/PUT /_emulator/state export and import.
type Snapshot struct {
	Tokens      []Token      `json:"tokens"`
	Policy      Policy       `json:"policy"`
	Cipher      Cipher       `json:"cipher"`
	Projects    []Project    `json:"projects"`
	Deployments []Deployment `json:"deployments"`
	Domains     []Domain     `json:"domains"`
	Files       []string     `json:"files"`
	Detaching   []Detachment `json:"detaching"`
	// Uploads are the contents of files uploaded with POST /v1/files, which the edge
	// serves (digests in Files without contents are served as placeholders).
	Uploads []Upload `json:"uploads"`

	// filesRead is the state reader's verdict on the deployments' files (nil when
	// the snapshot was not read by ReadSnapshot): Check takes it, rather than walking
	// every file again (filesread.go)
	filesRead *filesVerdict
}

// Upload is one uploaded file's content, named by its SHA-256 hex digest.
type Upload struct {
	Digest  string `json:"digest"`
	Content []byte `json:"content"` // base64 in JSON
}
