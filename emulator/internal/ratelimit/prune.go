package ratelimit

import "strings"

// pruneProbes is how many existing keys each new key examines for forgetting. With k
// probes per insertion, the map settles at about k/(k-1) times the keys still
// recovering: 3 keeps it within 1.5 times.
const pruneProbes = 3

// lookup returns key's state, adding a fresh one (and forgetting idle keys) if needed.
func lookup(m map[string]*state, key string, now int64) *state {
	if s, ok := m[key]; ok {
		return s
	}
	prune(m, now)
	s := &state{}
	// The key may be a slice of a larger string (a header); do not keep that alive.
	m[strings.Clone(key)] = s
	return s
}

// prune forgets idle keys among a few of m's. Go starts each map iteration at a random
// place, so the probes sample the whole map over time.
func prune(m map[string]*state, now int64) {
	i := 0
	for k, s := range m {
		if idle(s, now) {
			delete(m, k)
		}
		if i++; i == pruneProbes {
			return
		}
	}
}

// idle reports whether s is indistinguishable from a key never seen: a full bucket and
// no window in force, whatever the config. This holds for every later instant, so it
// relies on the clock not going backwards across calls, as the emulator's never does.
func idle(s *state, now int64) bool {
	return s.tat <= now && !open(s, now)
}
