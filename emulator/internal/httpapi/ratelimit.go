package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
)

// setRateHeaders writes X-RateLimit-Limit, -Remaining and -Reset. The keys are Go's
// canonical forms, so that Header.Get finds them in-process too (a test serving into a
// ResponseRecorder, a generated client wired to the handler); header names are not
// case-sensitive on the wire.
func setRateHeaders(h http.Header, d ratelimit.Decision) {
	// one backing array for the three values: this runs on every request (it cannot
	// live in the pooled exchange: the header map outlives the request in-process)
	v := [3]string{smallItoa(int64(d.Limit)), smallItoa(int64(max(d.Remaining, 0))), resetItoa(d.Reset.Unix())}
	vals := v[:]
	h["X-Ratelimit-Limit"] = vals[0:1:1]
	h["X-Ratelimit-Remaining"] = vals[1:2:2]
	h["X-Ratelimit-Reset"] = vals[2:3:3]
}

// smallInts are the decimal forms of the limits and counts most headers carry, made
// once rather than on every response: substrings of one string, so that making them
// is one allocation at start-up, not 5,001.
var smallInts = func() (t [5001]string) {
	var b []byte
	ends := [len(t)]int{}
	for i := range t {
		b = strconv.AppendInt(b, int64(i), 10)
		ends[i] = len(b)
	}
	all, start := string(b), 0
	for i := range t {
		t[i], start = all[start:ends[i]], ends[i]
	}
	return t
}()

func smallItoa(n int64) string {
	if n >= 0 && n < int64(len(smallInts)) {
		return smallInts[n]
	}
	return itoa(n)
}

// lastReset caches the decimal form of the last X-RateLimit-Reset: within a second,
// every response carries the same one.
var lastReset atomic.Pointer[struct {
	n int64
	s string
}]

func resetItoa(n int64) string {
	if p := lastReset.Load(); p != nil && p.n == n {
		return p.s
	}
	s := itoa(n)
	lastReset.Store(&struct {
		n int64
		s string
	}{n, s})
	return s
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
