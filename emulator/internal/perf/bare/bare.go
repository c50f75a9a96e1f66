// Package bare holds the reference handlers of hostemu's speed bar: for each hot path,
// a bare gin handler that does the same necessary work as hostemu and nothing else
// (no journal, no limiter, no faults, no coverage, no events, no scenarios). A change
// to hostemu is measured against these (package perf); they are not shipped.
//
//   - GET /v1/deployments/:id answers fixed bytes (the deployment as hostemu renders it);
//     given the world's deployment ids (NewGet), it first finds the id among them in a
//     map, as hostemu must find the deployment, and answers 404 for one it does not
//     hold.
//   - POST /v1/deployments decodes the same JSON strictly (unknown fields refused),
//     validates it as hostemu does (project known, files a map of path to 64 lowercase
//     hex characters, target preview or production, env names not empty), draws a
//     20-character id, inserts the deployment in a map under a lock, and answers the
//     same six fields with encoding/json.
//   - POST /v1/files reads the body, hashes it with SHA-256, compares the hex digest
//     with X-File-Digest, stores the bytes in a map under a lock (once per digest), and
//     answers {"digest","size"}.
//   - POST /v1/encrypt decodes {"payload": string}, seals the payload with AES-256-GCM
//     under a fixed key and a random 12-byte nonce, and answers {"envelope"} with the
//     nonce and ciphertext in unpadded base64url; POST /v1/decrypt reverses it and
//     answers {"payload"} encoded by encoding/json. That is the work the spec asks of
//     the service (docs/performance.md): an opaque string that opens to the payload.
//     hostemu's envelope adds a data key per envelope, wrapped under a named master key
//     (rotation), which costs one more key schedule and two 32-byte seals: hostemu's
//     design, not the spec's, so it is not in the reference.
//   - POST /_reset empties the deployments and files, as hostemu's POST
//     /_emulator/reset returns to its start-up world: the harness's rounds of creates
//     start both sides from the same world (not a hot path, not measured).
//
// Every route checks the bearer token against one fixed string.
package bare

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Tokens the reference accepts: the default fixtures' deploy and cipher keys, so that
// the same requests go to hostemu and to the reference.
const (
	ReadToken   = "hostemu-read"
	DeployToken = "hostemu-deploy"
	CipherToken = "hostemu-cipher"
)

// Project is the project the reference knows: the default fixtures' first.
const Project = "prj_demo"

// server is the reference's state.
type server struct {
	mu          sync.Mutex
	rng         *mrand.ChaCha8
	projects    map[string]string // id to name
	deployments map[string]*deployment
	files       map[string][]byte
	aead        cipher.AEAD
	log         *os.File // when set, each create is appended as a JSON line and synced
	logMu       sync.Mutex
}

type deployment struct {
	ID, ProjectID, URL, Target, Status string
	CreatedAt                          time.Time
	Files, Env                         map[string]string
}

// New is a reference server whose GET answers body.
func New(body []byte) http.Handler { return NewWithLog(body, nil) }

// NewWithLog is New whose creates are durable as hostemu's under --state: each is
// appended to log as a JSON line and synced before its answer.
func NewWithLog(body []byte, log *os.File) http.Handler { return NewGet(body, log, nil) }

// NewGet is NewWithLog whose GET finds its id in a map of ids (the world's deployment
// ids, as hostemu finds the deployment by its id) before answering body, and answers
// 404 for an id not there; with no ids, it answers body for any id without a lookup.
func NewGet(body []byte, log *os.File, ids []string) http.Handler {
	block, _ := aes.NewCipher(make([]byte, 32))
	aead, _ := cipher.NewGCM(block)
	s := &server{rng: mrand.NewChaCha8([32]byte{}), projects: map[string]string{Project: "demo-shop"},
		deployments: map[string]*deployment{}, files: map[string][]byte{}, aead: aead, log: log}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	var known map[string]struct{}
	if len(ids) > 0 {
		known = make(map[string]struct{}, len(ids))
		for _, id := range ids {
			known[id] = struct{}{}
		}
	}
	r.GET("/v1/deployments/:id", func(c *gin.Context) {
		if !authorized(c, ReadToken) {
			return
		}
		if known != nil {
			if _, ok := known[c.Param("id")]; !ok {
				fail(c, http.StatusNotFound, "deployment")
				return
			}
		}
		c.Data(http.StatusOK, "application/json; charset=utf-8", body)
	})
	r.POST("/v1/deployments", s.createDeployment)
	r.POST("/v1/files", s.uploadFile)
	r.POST("/v1/encrypt", s.encrypt)
	r.POST("/v1/decrypt", s.decrypt)
	r.POST("/_reset", s.reset)
	// the start's reference (TestBinaryHotPaths' exec → healthy): a bare gin binary
	// is healthy as soon as it listens
	r.GET("/_emulator/health", func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", healthBody) })
	return r
}

var healthBody = []byte(`{"status":"ok"}`)

func authorized(c *gin.Context, token string) bool {
	if c.GetHeader("Authorization") != "Bearer "+token {
		fail(c, http.StatusUnauthorized, "unauthorized")
		return false
	}
	return true
}

func fail(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, gin.H{"error": gin.H{"code": "invalid_request", "message": msg}})
}

func decode(c *gin.Context, limit int64, dst any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		fail(c, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

type createdView struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
	ProjectID string `json:"project_id"`
	Target    string `json:"target"`
}

func (s *server) createDeployment(c *gin.Context) {
	if !authorized(c, DeployToken) {
		return
	}
	var req struct {
		ProjectID *string           `json:"project_id"`
		Files     map[string]string `json:"files"`
		Target    *string           `json:"target"`
		Env       map[string]string `json:"env"`
	}
	if !decode(c, 1<<20, &req) {
		return
	}
	if req.ProjectID == nil || req.Files == nil {
		fail(c, http.StatusBadRequest, "project_id and files are required")
		return
	}
	for p, h := range req.Files {
		if p == "" || !validHash(h) {
			fail(c, http.StatusBadRequest, "files")
			return
		}
	}
	target := "preview"
	if req.Target != nil {
		if target = *req.Target; target != "preview" && target != "production" {
			fail(c, http.StatusBadRequest, "target")
			return
		}
	}
	for k := range req.Env {
		if k == "" {
			fail(c, http.StatusBadRequest, "env")
			return
		}
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	now := time.Now().UTC().Truncate(time.Millisecond)
	s.mu.Lock()
	name, ok := s.projects[*req.ProjectID]
	if !ok {
		s.mu.Unlock()
		fail(c, http.StatusNotFound, "project")
		return
	}
	id := make([]byte, 24)
	copy(id, "dpl_")
	for i := 4; i < len(id); i++ {
		id[i] = alphabet[s.rng.Uint64()%uint64(len(alphabet))]
	}
	d := &deployment{ID: string(id), ProjectID: *req.ProjectID, Target: target, Status: "queued", CreatedAt: now, Files: req.Files, Env: req.Env}
	d.URL = "https://" + name + "-" + d.ID[4:] + ".hostemu.localhost"
	s.deployments[d.ID] = d
	s.mu.Unlock()
	if s.log != nil {
		line, _ := json.Marshal(d)
		s.logMu.Lock()
		_, err := s.log.Write(append(line, '\n'))
		if err == nil {
			err = s.log.Sync()
		}
		s.logMu.Unlock()
		if err != nil {
			fail(c, http.StatusInternalServerError, err.Error())
			return
		}
	}
	c.JSON(http.StatusCreated, createdView{ID: d.ID, URL: d.URL, Status: d.Status, CreatedAt: now.Format(time.RFC3339Nano), ProjectID: d.ProjectID, Target: d.Target})
}

// reset drops every deployment and file, leaving them to the collector as hostemu's
// reset leaves its world; the ids start again from the same seed, as hostemu's do.
func (s *server) reset(c *gin.Context) {
	if !authorized(c, DeployToken) {
		return
	}
	s.mu.Lock()
	s.deployments, s.files = map[string]*deployment{}, map[string][]byte{}
	s.rng = mrand.NewChaCha8([32]byte{})
	s.mu.Unlock()
	c.Status(http.StatusOK)
}

func (s *server) uploadFile(c *gin.Context) {
	if !authorized(c, DeployToken) {
		return
	}
	digest := c.GetHeader("X-File-Digest")
	if !validHash(digest) {
		fail(c, http.StatusBadRequest, "digest")
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, 100<<20))
	if err != nil {
		fail(c, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != digest {
		fail(c, http.StatusBadRequest, "digest mismatch")
		return
	}
	s.mu.Lock()
	if _, ok := s.files[digest]; !ok {
		s.files[digest] = b
	}
	s.mu.Unlock()
	c.JSON(http.StatusCreated, struct {
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}{digest, len(b)})
}

var b64 = base64.RawURLEncoding

func (s *server) encrypt(c *gin.Context) {
	if !authorized(c, CipherToken) {
		return
	}
	var req struct {
		Payload *string `json:"payload"`
	}
	if !decode(c, 4<<20, &req) {
		return
	}
	if req.Payload == nil {
		fail(c, http.StatusBadRequest, "payload")
		return
	}
	raw := make([]byte, 12, 12+len(*req.Payload)+16)
	rand.Read(raw)
	raw = s.aead.Seal(raw, raw[:12], []byte(*req.Payload), nil)
	out := make([]byte, 0, len(`{"envelope":""}`)+b64.EncodedLen(len(raw)))
	out = append(out, `{"envelope":"`...)
	out = b64.AppendEncode(out, raw)
	c.Data(http.StatusOK, "application/json; charset=utf-8", append(out, `"}`...))
}

func (s *server) decrypt(c *gin.Context) {
	if !authorized(c, CipherToken) {
		return
	}
	var req struct {
		Envelope *string `json:"envelope"`
	}
	if !decode(c, 4<<20, &req) {
		return
	}
	if req.Envelope == nil {
		fail(c, http.StatusBadRequest, "envelope")
		return
	}
	raw, err := b64.DecodeString(*req.Envelope)
	if err != nil || len(raw) < 12+16 {
		fail(c, http.StatusBadRequest, "envelope")
		return
	}
	plain, err := s.aead.Open(raw[12:12], raw[:12], raw[12:], nil)
	if err != nil {
		fail(c, http.StatusBadRequest, "envelope")
		return
	}
	c.JSON(http.StatusOK, struct {
		Payload string `json:"payload"`
	}{string(plain)})
}
