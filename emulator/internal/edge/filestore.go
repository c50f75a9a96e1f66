package edge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// DefaultFileStoreSize is the byte budget of a FileStore made with a limit of zero or less:
// the default of --file-store-size.
const DefaultFileStoreSize int64 = 256 << 20

// Errors of FileStore.Put and FileStore.Load. The API maps them to its codes:
// ErrStorageFull to 507 storage_full, the other two to 400 digest_mismatch.
var (
	ErrStorageFull    = errors.New("edge: file store full")
	ErrDigestMismatch = errors.New("edge: content does not hash to the digest")
	ErrInvalidDigest  = errors.New("edge: digest is not 64 lowercase hex characters")
)

// FileStore holds uploaded file contents by their SHA-256 (lowercase hex), within a byte
// budget. It verifies every digest itself, so a caller may hand it the client's
// X-File-Digest unchecked. Stored slices are shared, never copied: callers must not
// modify a slice after Put, nor one returned by Get or Snapshot. Safe for concurrent use.
type FileStore struct {
	limit  int64
	shared *Budget // nil, or the bytes all the stores that share it may hold together

	mu    sync.RWMutex     // guards files and used
	files map[string]entry // digest → content
	used  int64            // sum of len(content)
}

// Budget bounds the bytes several file stores hold together (every namespace's): each
// store keeps its own limit too.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes (DefaultFileStoreSize when limit <= 0).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultFileStoreSize
	}
	return &Budget{limit: limit}
}

// take reserves n bytes, or reports false when they do not fit.
func (b *Budget) take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes.
func (b *Budget) give(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// NewSharedFileStore is NewFileStore whose bytes also count against shared.
func NewSharedFileStore(limit int64, shared *Budget) *FileStore {
	s := NewFileStore(limit)
	s.shared = shared
	return s
}

// entry is one stored file, with its ETag made once rather than on every request.
type entry struct {
	data []byte
	etag string // "<digest>", quoted
}

func newEntry(digest string, data []byte) entry {
	return entry{data: data, etag: `"` + digest + `"`}
}

// NewFileStore returns an empty store holding at most limit bytes of content;
// limit <= 0 means DefaultFileStoreSize.
func NewFileStore(limit int64) *FileStore {
	if limit <= 0 {
		limit = DefaultFileStoreSize
	}
	return &FileStore{limit: limit, files: make(map[string]entry)}
}

// Put stores data under digest. It is all or nothing: a digest that is malformed
// (ErrInvalidDigest), does not match data (ErrDigestMismatch) or would take the store
// past its budget (ErrStorageFull) stores nothing. Storing a digest already held costs
// nothing and succeeds. The store keeps data itself; the caller must not modify it.
func (s *FileStore) Put(digest string, data []byte) error {
	if !state.ValidFileHash(digest) {
		return ErrInvalidDigest
	}
	if s.Has(digest) {
		return nil
	}
	if int64(len(data)) > s.limit {
		return ErrStorageFull // no point hashing what can never fit
	}
	if !matches(digest, data) {
		return ErrDigestMismatch
	}
	return s.store(digest, data)
}

// PutHashed is Put for data the caller has already hashed to digest (the world checks
// an upload's X-File-Digest itself, to word its own error): it is not hashed again.
func (s *FileStore) PutHashed(digest string, data []byte) error {
	if int64(len(data)) > s.limit {
		return ErrStorageFull
	}
	return s.store(digest, data)
}

// store adds data under digest unless it is there already, within the limits.
func (s *FileStore) store(digest string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[digest]; ok {
		return nil
	}
	if s.used+int64(len(data)) > s.limit || !s.shared.take(int64(len(data))) {
		return ErrStorageFull
	}
	s.files[digest] = newEntry(digest, data)
	s.used += int64(len(data))
	return nil
}

// Get returns the content stored under digest; ok is false if it was never uploaded.
func (s *FileStore) Get(digest string) (data []byte, ok bool) {
	e, ok := s.get(digest)
	return e.data, ok
}

func (s *FileStore) get(digest string) (entry, bool) {
	s.mu.RLock()
	e, ok := s.files[digest]
	s.mu.RUnlock()
	return e, ok
}

// Has reports whether digest is stored: what strict uploads ask of every file of a
// deployment.
func (s *FileStore) Has(digest string) bool {
	_, ok := s.Get(digest)
	return ok
}

// Used returns the bytes of content held.
func (s *FileStore) Used() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.used
}

// Limit returns the store's byte budget.
func (s *FileStore) Limit() int64 { return s.limit }

// Len returns the number of files held.
func (s *FileStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.files)
}

// Snapshot returns every stored file, digest → content, for export and --state. The map
// is the caller's; the slices are shared and must not be modified.
func (s *FileStore) Snapshot() map[string][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string][]byte, len(s.files))
	for d, e := range s.files {
		out[d] = e.data
	}
	return out
}

// Load replaces the store's contents with files (from Snapshot, an import or --state),
// verifying every digest and the budget first: on error the store is left as it was.
// The store keeps the slices; the caller must not modify them.
func (s *FileStore) Load(files map[string][]byte) error {
	var used int64
	for _, b := range files {
		used += int64(len(b))
	}
	if used > s.limit { // before any content is hashed
		return ErrStorageFull
	}
	next := make(map[string]entry, len(files))
	for d, b := range files {
		e, err := loadEntry(d, b)
		if err != nil {
			return err
		}
		next[d] = e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared.give(s.used)
	if !s.shared.take(used) {
		s.shared.used.Add(s.used) // keep what was held
		return ErrStorageFull
	}
	s.files, s.used = next, used
	return nil
}

// Release gives the store's bytes back to its shared budget, for good (a closed world):
// the contents stay readable, for a last snapshot, but count against nothing.
func (s *FileStore) Release() {
	s.mu.Lock()
	s.shared.give(s.used)
	s.shared = nil
	s.mu.Unlock()
}

// Reset empties the store (POST /_emulator/reset).
func (s *FileStore) Reset() {
	s.mu.Lock()
	s.shared.give(s.used)
	s.files, s.used = make(map[string]entry), 0
	s.mu.Unlock()
}

// Digest returns the SHA-256 of data in the API's form.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// DigestIs reports whether data's Digest is digest, without a string of its own when
// it is (an upload's check, on every upload); got is the Digest when it is not.
func DigestIs(data []byte, digest string) (got string, ok bool) {
	sum := sha256.Sum256(data)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	if string(h[:]) == digest {
		return "", true
	}
	return string(h[:]), false
}

// matches reports whether data's Digest is digest.
func matches(digest string, data []byte) bool {
	_, ok := DigestIs(data, digest)
	return ok
}

// loaded remembers the contents Load has hashed to their digest, by the address of
// their first byte and their length, with their ETag. Every namespace and every reset
// of the same fixtures loads the same shared site contents (built once, never written),
// and hashing them again was a sixth of a namespace's creation; a content at a
// remembered address and length is those bytes (the entry holds them, so the memory is
// not reused), and its digest is a valid one. At most maxLoaded are kept.
var loaded struct {
	sync.Mutex
	m map[string]loadedAt
}

type loadedAt struct {
	p    *byte
	n    int
	etag string // shared by every store that loads the content
}

const maxLoaded = 4096

// loadEntry is the entry Load stores for data under digest, or why it stores nothing:
// it checks the digest and the content (skipping contents hashed before).
func loadEntry(digest string, data []byte) (entry, error) {
	if len(data) > 0 {
		loaded.Lock()
		at, known := loaded.m[digest]
		loaded.Unlock()
		if known && at.p == &data[0] && at.n == len(data) {
			return entry{data: data, etag: at.etag}, nil
		}
	}
	if !state.ValidFileHash(digest) {
		return entry{}, ErrInvalidDigest
	}
	if !matches(digest, data) {
		return entry{}, ErrDigestMismatch
	}
	e := newEntry(digest, data)
	if len(data) > 0 {
		loaded.Lock()
		if loaded.m == nil || len(loaded.m) >= maxLoaded {
			loaded.m = make(map[string]loadedAt)
		}
		loaded.m[digest] = loadedAt{&data[0], len(data), e.etag}
		loaded.Unlock()
	}
	return e, nil
}
