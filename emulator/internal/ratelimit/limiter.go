package ratelimit

import (
	"sync"
	"time"
)

// Config sets every number of the rate limits, as a scenario's rate_limits block does.
// The zero value limits nothing.
type Config struct {
	// Enabled makes the limits refuse requests. When false, requests are still counted
	// and headers still computed, but none is refused: one over the limit goes through
	// with Remaining 0 and, like a refusal, spends nothing, so enabling the limits later
	// does not punish the past.
	Enabled bool
	// PerTokenPerSecond refills each token's bucket; 0 turns the bucket off.
	PerTokenPerSecond float64
	// PerTokenPerMinute is each token's fixed 60 s window; 0 turns the window off.
	PerTokenPerMinute int
	// PerIPPerSecond refills the bucket of each unauthenticated client IP and service;
	// 0 turns it off.
	PerIPPerSecond float64
	// Burst is how much of its rate a bucket holds: capacity ceil(rate × Burst), at
	// least 1, so 0s means no bursting.
	Burst time.Duration
	// PerScope replaces the per-token numbers for the tokens of a scope ("read",
	// "deploy", "admin"), as a scenario's rate_limits.per_scope does; a scope not in it
	// uses PerTokenPerSecond and PerTokenPerMinute.
	PerScope map[string]ScopeLimits
}

// ScopeLimits are the per-token numbers of one scope, with PerTokenPerSecond's and
// PerTokenPerMinute's meaning (0 turns that constraint off).
type ScopeLimits struct {
	PerSecond float64
	PerMinute int
}

// Decision is the answer for one request: whether it may go on, and the rate-limit
// headers describing the constraint nearest exhaustion (the lowest Remaining; on a tie
// the bucket rather than the window). Limit 0 means no constraint applies, and the
// caller sends no headers.
type Decision struct {
	// Allowed is false when the request must be answered 429.
	Allowed bool
	// Limit is the capacity of the constraint described (X-RateLimit-Limit).
	Limit int
	// Remaining is what that constraint has left after this request, never above Limit
	// and 0 on a refusal (X-RateLimit-Remaining).
	Remaining int
	// Reset is the instant that constraint is fully restored, rounded up to the whole
	// second (X-RateLimit-Reset is its Unix time).
	Reset time.Time
	// RetryAfter, set only on a refusal, is how long until one request is allowed
	// again: more than 0; the HTTP layer rounds it up to whole seconds for Retry-After.
	RetryAfter time.Duration
}

// Limiter holds the counters of every token and client IP. It is safe for concurrent
// use. Keys that have recovered fully are forgotten as new ones arrive, which changes no
// decision (a forgotten key is exactly like a new one) but keeps memory bounded by the
// keys active in the last minute, however many distinct IPs call.
type Limiter struct {
	mu     sync.Mutex        // guards cfg, lim, tokens and ips
	cfg    Config            // as set
	lim    limits            // cfg, compiled
	tokens map[string]*state // by token hash or API key id
	ips    map[string]*state // by service and client IP
}

// limits is a Config in the units the arithmetic uses.
type limits struct {
	token  bucket
	minute window
	ip     bucket
	scopes map[string]scopeLimits
}

type scopeLimits struct {
	token  bucket
	minute window
}

func compile(cfg Config) limits {
	l := limits{
		token:  newBucket(cfg.PerTokenPerSecond, cfg.Burst),
		minute: window{limit: int64(max(cfg.PerTokenPerMinute, 0))},
		ip:     newBucket(cfg.PerIPPerSecond, cfg.Burst),
	}
	for scope, sl := range cfg.PerScope {
		if l.scopes == nil {
			l.scopes = make(map[string]scopeLimits, len(cfg.PerScope))
		}
		l.scopes[scope] = scopeLimits{token: newBucket(sl.PerSecond, cfg.Burst), minute: window{limit: int64(max(sl.PerMinute, 0))}}
	}
	return l
}

// forScope is the bucket and window of a token of scope.
func (l limits) forScope(scope string) (bucket, window) {
	if sl, ok := l.scopes[scope]; ok {
		return sl.token, sl.minute
	}
	return l.token, l.minute
}

// state is one key's counters. The zero value is a key never seen.
type state struct {
	tat   int64 // Unix nanoseconds at which the bucket is full again
	start int64 // Unix nanoseconds at which the window in force opened
	count int64 // requests counted in that window
}

// view is one constraint as the headers would describe it.
type view struct {
	limit     int64
	remaining int64
	full      int64 // Unix nanoseconds at which it is fully restored
	wait      int64 // nanoseconds until one request fits; 0 when one does
}

// New returns a Limiter with fresh counters.
func New(cfg Config) *Limiter {
	l := &Limiter{}
	l.SetConfig(cfg)
	l.Reset()
	return l
}

// SetConfig switches to new numbers, as a scenario change does. Counters are kept: a
// bucket keeps how far it is from full, capped at its new capacity from the key's next
// request, and a window keeps its count and its end.
func (l *Limiter) SetConfig(cfg Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg, l.lim = cfg, compile(cfg)
}

// Config returns the numbers in force.
func (l *Limiter) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// Reset forgets every counter, as POST /_emulator/reset does.
func (l *Limiter) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tokens = make(map[string]*state)
	l.ips = make(map[string]*state)
}

// Token spends one request of the per-token limits (bucket and window) of key, a token
// hash or an API key id, at now. A refused request spends nothing.
func (l *Limiter) Token(key string, now time.Time) Decision {
	return l.TokenOf("", key, now)
}

// TokenOf is Token for a token of scope: Config.PerScope's numbers when it names the
// scope, else the per-token ones. Keys must not be shared across scopes.
func (l *Limiter) TokenOf(scope, key string, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, w := l.lim.forScope(scope)
	return l.take(l.tokens, key, now.UnixNano(), b, w)
}

// IP spends one request of the bucket of key, a service and a client IP such as
// "hosting|192.0.2.1", at now. A refused request spends nothing.
func (l *Limiter) IP(key string, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(l.ips, key, now.UnixNano(), l.lim.ip, window{})
}

// Exhausted is what a 429 injected by a rate_limit fault reports for the caller key
// (per IP when perIP, else per token) at now: the constraint nearest exhaustion as if it
// were exhausted, Remaining 0, with a Reset and a RetryAfter consistent with that and
// with any constraint really exhausted. It spends nothing, and answers even when the
// limits are disabled or off (then with Limit 0 and RetryAfter 1s).
func (l *Limiter) Exhausted(key string, now time.Time, perIP bool) Decision {
	return l.ExhaustedOf("", key, now, perIP)
}

// ExhaustedOf is Exhausted for a token of scope (see TokenOf).
func (l *Limiter) ExhaustedOf(scope, key string, now time.Time, perIP bool) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, w := l.lim.forScope(scope)
	m := l.tokens
	if perIP {
		b, w, m = l.lim.ip, window{}, l.ips
	}
	n := now.UnixNano()
	if !b.on() && !w.on() {
		return Decision{Reset: ceilSecond(n + int64(time.Second)), RetryAfter: time.Second}
	}
	var s state
	if p := m[key]; p != nil {
		s = *p
	}
	bv, wv := views(&s, n, b, w)
	var v view
	if nearestIsBucket(b, bv, w, wv) {
		v = view{limit: b.capacity, full: n + b.span, wait: max(b.interval, wv.wait)}
	} else {
		end := n + windowLength
		if open(&s, n) {
			end = s.start + windowLength
		}
		v = view{limit: w.limit, full: end, wait: max(end-n, bv.wait)}
	}
	d := decide(v, false)
	d.RetryAfter = time.Duration(max(v.wait, 1))
	return d
}

// take decides one request of key against bucket b and window w, spending it if allowed.
func (l *Limiter) take(m map[string]*state, key string, now int64, b bucket, w window) Decision {
	if !b.on() && !w.on() {
		return Decision{Allowed: true}
	}
	s := lookup(m, key, now)
	var debt int64
	if b.on() {
		debt = b.debt(s.tat, now)
		// After a switch to a smaller bucket, cap what the key owes at once, so that
		// this answer's Reset and RetryAfter hold from here on.
		s.tat = min(s.tat, now+debt)
	}
	if (!b.on() || b.allows(debt)) && (!w.on() || count(s, now) < w.limit) {
		if b.on() {
			s.tat = now + debt + b.interval
		}
		if w.on() {
			spend(s, now)
		}
		bv, wv := views(s, now, b, w)
		return decide(nearest(bv, wv, b, w), true)
	}
	bv, wv := views(s, now, b, w)
	v := nearest(bv, wv, b, w)
	v.remaining = 0
	if !l.cfg.Enabled {
		return decide(v, true)
	}
	d := decide(v, false)
	d.RetryAfter = time.Duration(max(bv.wait, wv.wait, 1))
	return d
}

// views describes the bucket and the window of s at now; a constraint that is off gets
// a zero view.
func views(s *state, now int64, b bucket, w window) (bv, wv view) {
	if b.on() {
		bv = b.view(b.debt(s.tat, now), now)
	}
	if w.on() {
		wv = w.view(s, now)
	}
	return bv, wv
}

// nearest picks the view the headers describe.
func nearest(bv, wv view, b bucket, w window) view {
	if nearestIsBucket(b, bv, w, wv) {
		return bv
	}
	return wv
}

func nearestIsBucket(b bucket, bv view, w window, wv view) bool {
	return !w.on() || (b.on() && bv.remaining <= wv.remaining)
}

func decide(v view, allowed bool) Decision {
	return Decision{
		Allowed:   allowed,
		Limit:     int(v.limit),
		Remaining: int(v.remaining),
		Reset:     ceilSecond(v.full),
	}
}

// ceilSecond turns Unix nanoseconds into a time rounded up to the whole second.
func ceilSecond(ns int64) time.Time {
	sec := ns / int64(time.Second)
	if ns%int64(time.Second) > 0 {
		sec++
	}
	return time.Unix(sec, 0).UTC()
}
