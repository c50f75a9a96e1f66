package ratelimit

import "time"

// windowLength is the fixed window of the per-minute limit.
const windowLength = int64(time.Minute)

// window holds the per-minute limit's parameter.
type window struct {
	limit int64 // requests per window; 0 means the window is off
}

func (w window) on() bool { return w.limit > 0 }

// open reports whether s has a window in force at now. A clock that went back before
// the window's start is still inside it.
func open(s *state, now int64) bool {
	return s.count > 0 && now < s.start+windowLength
}

// count is the number of requests s has spent in the window in force at now.
func count(s *state, now int64) int64 {
	if open(s, now) {
		return s.count
	}
	return 0
}

// view describes the window after count requests: requests left, the instant it closes
// (and is fully restored), and how long until one request fits.
func (w window) view(s *state, now int64) view {
	if !open(s, now) {
		return view{limit: w.limit, remaining: w.limit, full: now}
	}
	v := view{limit: w.limit, remaining: max(w.limit-s.count, 0), full: s.start + windowLength}
	if v.remaining == 0 {
		v.wait = v.full - now
	}
	return v
}

// spend counts one request in the window, opening one if none is in force.
func spend(s *state, now int64) {
	if !open(s, now) {
		s.start, s.count = now, 0
	}
	s.count++
}
