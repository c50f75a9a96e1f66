package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
)

// setRateHeaders writes X-RateLimit-Limit, -Remaining and -Reset. The keys are Go's
// canonical forms, so that Header.Get finds them in-process too (a test serving into a
// ResponseRecorder, a generated client wired to the handler); header names are not
// case-sensitive on the wire.
//
// The values are slices shared by every answer (as Date's is): a small number's from
// smallInts, the reset of the current second from lastReset; each has its length as
// its capacity, so a Header.Add copies rather than writes into it, and nothing writes
// a header value in place. This runs on every request: no allocation.
func setRateHeaders(h http.Header, d ratelimit.Decision) {
	h["X-Ratelimit-Limit"] = smallItoas(int64(d.Limit))
	h["X-Ratelimit-Remaining"] = smallItoas(int64(max(d.Remaining, 0)))
	h["X-Ratelimit-Reset"] = resetItoa(d.Reset.Unix())
}

// smallInts are the decimal forms of the limits and counts most headers carry, made
// once rather than on every response: substrings of one string, so that making them
// is one allocation, not 5,001. They are made on the first answer that carries them,
// not at start-up: the table is 80 KB and its digits 19 KB, 30 to 66 of a start's page
// faults (a start is mostly page faults on the machine measured: docs/performance.md,
// "Replay and the start, seventh pass").
var (
	smallInts     [5001]string
	smallIntsOnce sync.Once
)

func makeSmallInts() {
	var b []byte
	for i := range smallInts {
		b = strconv.AppendInt(b, int64(i), 10)
	}
	all, start := string(b), 0
	for i := range smallInts {
		end := start + 1
		for n := i; n >= 10; n /= 10 {
			end++
		}
		smallInts[i], start = all[start:end], end
	}
}

// smallItoas is a header value of the decimal form of n: a slice of smallInts when n
// is small.
func smallItoas(n int64) []string {
	if n >= 0 && n < int64(len(smallInts)) {
		smallIntsOnce.Do(makeSmallInts)
		return smallInts[n : n+1 : n+1]
	}
	return []string{itoa(n)}
}

// lastReset caches the header value of the last X-RateLimit-Reset: within a second,
// every response carries the same one.
var lastReset atomic.Pointer[struct {
	n int64
	v []string
}]

func resetItoa(n int64) []string {
	if p := lastReset.Load(); p != nil && p.n == n {
		return p.v
	}
	v := []string{itoa(n)}
	lastReset.Store(&struct {
		n int64
		v []string
	}{n, v})
	return v
}

func (a *API) tooMany(ex *exchange, r *http.Request, d ratelimit.Decision) {
	wait := max(int64(math.Ceil(d.RetryAfter.Seconds())), 1)
	secs := itoa(wait)
	ex.Header().Set("Retry-After", secs)
	ex.w.WaitedOn(time.Duration(wait) * time.Second)
	a.fail(ex, r, apperr.New(apperr.RateLimited, "rate limit exceeded; retry after "+secs+" s"))
}

// lastDate caches the Date header of the last second: every answer within it carries
// the same value, so formatting costs one allocation a second, not one a request.
var lastDate atomic.Pointer[struct {
	sec int64
	v   []string
}]

// dateHeader is the Date header for the emulator's time now: on a manual clock the
// answers' Date moves with the clock, as X-RateLimit-Reset does.
func dateHeader(now time.Time) []string {
	sec := now.Unix()
	if p := lastDate.Load(); p != nil && p.sec == sec {
		return p.v
	}
	v := []string{now.UTC().Format(http.TimeFormat)}
	lastDate.Store(&struct {
		sec int64
		v   []string
	}{sec, v})
	return v
}
