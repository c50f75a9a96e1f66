package httpapi

import (
	"encoding/json"
	"hash/maphash"
	"sync/atomic"

	"github.com/hostemu/hostemu/emulator/internal/world"
)

// renderCache keeps the last rendering of recently read deployments, so that a client
// polling GET /v1/deployments/{id} (an app waiting for ready, a load test) is answered
// from bytes already rendered. An entry is served only while its world's state has not
// changed since it was rendered (world.Version, which counts every change and runs due
// transitions first) and for the same base URL (build_logs_url depends on it): it can
// never be stale. It is bounded: renderSlots entries of at most maxRenderedBytes.
type renderCache struct {
	seed  maphash.Seed
	slots [renderSlots]atomic.Pointer[rendered]
}

const (
	renderSlots      = 64
	maxRenderedBytes = 16 << 10
)

// rendered is one cached answer; immutable once stored.
type rendered struct {
	w       *world.World
	version uint64
	id      string
	base    string
	body    json.RawMessage
}

func newRenderCache() *renderCache { return &renderCache{seed: maphash.MakeSeed()} }

func (rc *renderCache) slot(id string) *atomic.Pointer[rendered] {
	return &rc.slots[maphash.String(rc.seed, id)%renderSlots]
}

// get is the cached answer for deployment id of world w at version, for the base URL
// prefix + host (see baseParts).
func (rc *renderCache) get(w *world.World, version uint64, id, prefix, host string) (*rendered, bool) {
	e := rc.slot(id).Load()
	if e == nil || e.w != w || e.version != version || e.id != id ||
		len(e.base) != len(prefix)+len(host) || e.base[:len(prefix)] != prefix || e.base[len(prefix):] != host {
		return nil, false
	}
	return e, true
}

// put keeps body as the answer for deployment id of world w at version, for base. The
// version must have been read before the state body was rendered from.
func (rc *renderCache) put(w *world.World, version uint64, id, base string, body []byte) {
	if len(body) > maxRenderedBytes {
		return
	}
	rc.slot(id).Store(&rendered{w: w, version: version, id: id, base: base, body: append(json.RawMessage(nil), body...)})
}
