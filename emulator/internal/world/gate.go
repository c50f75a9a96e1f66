package world

import (
	"crypto/subtle"
	"strconv"
	"strings"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/coverage"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// What every public request passes before its handler: who calls, whether its rate
// limit allows it, and whether a fault fires. The HTTP layer calls these in the order
// docs/api.md gives (count before auth, so an exhausted IP gets 429 rather than 401).

// Authenticate returns the scope of a hosting token and the key its requests are
// counted under (stable for the token, and not the token itself). The key ends with
// the scope (state.LimitScopeMark), so Count and Exhausted apply the scope's own limits
// (rate_limits.per_scope) without the HTTP layer passing the scope along.
func (w *World) Authenticate(token string) (scope state.Scope, limitKey string, ok bool) {
	return w.store.AuthenticateKey(token)
}

// limitScope is the scope a limit key carries, or "" (cipher keys, client IPs).
func limitScope(key string) string {
	if i := strings.LastIndex(key, state.LimitScopeMark); i >= 0 {
		return key[i+len(state.LimitScopeMark):]
	}
	return ""
}

// AuthenticateCipher checks a decryption API key in constant time against every key,
// and returns the key its requests are counted under.
func (w *World) AuthenticateCipher(key string) (limitKey string, ok bool) {
	found, hit := 0, 0
	for i, k := range w.store.Cipher().APIKeys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			found, hit = i, 1
		}
	}
	if hit == 0 {
		return "", false
	}
	return "cipher|k" + strconv.Itoa(found), true
}

// DomainWriteScope is the scope domain add and delete need (the fixtures' policy).
func (w *World) DomainWriteScope() state.Scope { return w.store.Policy().DomainWriteScope }

// Count spends one request of a rate-limit key: a token's, or with perIP a client
// IP's (unauthenticated requests). It returns the decision and the emulator's time it
// was taken at (the answer's Date, so X-RateLimit-Reset - Date means the same on a
// manual clock as on a real one).
//
// wall says the emulated time is the wall time (see clock.NowWallAt). read is the
// machine's time read at the request's start (clock.NowAt), or the zero time.
func (w *World) Count(key string, perIP bool, read time.Time) (d ratelimit.Decision, now time.Time, wall bool) {
	now, wall = w.clock.NowWallAt(read)
	if perIP {
		return w.limiter.IP(key, now), now, wall
	}
	return w.limiter.TokenOf(limitScope(key), key, now), now, wall
}

// Exhausted is the decision of a limit as if it were used up (the rate_limit fault).
// A retryAfter above 0 replaces the limiter's Retry-After, and X-RateLimit-Reset
// moves to no earlier than then, so the headers still agree.
func (w *World) Exhausted(key string, perIP bool, retryAfter time.Duration) ratelimit.Decision {
	now := w.clock.Now()
	d := w.limiter.ExhaustedOf(limitScope(key), key, now, perIP)
	if retryAfter > 0 {
		d.RetryAfter = retryAfter
		if at := now.Add(retryAfter + time.Second - 1).Truncate(time.Second); at.After(d.Reset) {
			d.Reset = at
		}
	}
	return d
}

// MatchFault is the action of the first fault that matches the request and fires.
func (w *World) MatchFault(r fault.Request) (fault.Action, bool) {
	act, ok := w.faults.Match(r)
	if ok {
		var buf [maxFaultActions]string
		for _, a := range faultActions(act, &buf) {
			w.cov.Fault(a)
		}
	}
	w.emitFaultHit(act, ok)
	return act, ok
}

// FaultsWantBody reports whether a fault with a body matcher matches r on every other
// field (fault.Set.WantsBody): the request's body is then read ahead for Match.
func (w *World) FaultsWantBody(r fault.Request) bool { return w.faults.WantsBody(r) }

// Coverage is what the world's clients exercised: answers by operation, lifecycle
// edges, faults fired. It outlives resets and imports (DELETE /_emulator/coverage
// starts it afresh).
func (w *World) Coverage() *coverage.Counter { return w.cov }

// Record journals an answered request, at the emulator's time.
func (w *World) Record(e journal.Entry) { w.RecordAt(e, time.Time{}) }

// RecordAt is Record for a caller that has just read the machine's time (read, as
// clock.NowAt takes it: the request's end, which also timed it).
func (w *World) RecordAt(e journal.Entry, read time.Time) {
	e.Time = w.clock.NowAt(read)
	w.journal.RecordTo(&e)
	w.emitRequest(&e) // the event carries the entry as the journal lists it
}
