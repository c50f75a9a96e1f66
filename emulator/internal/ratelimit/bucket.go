package ratelimit

import (
	"math"
	"time"
)

// bucket holds a token bucket's parameters, in nanoseconds of the emulator clock.
//
// The bucket's state is one instant per key, its "theoretical arrival time" (GCRA): the
// instant at which the bucket is full again. Its debt at now is that instant minus now,
// between 0 (full) and span (empty); one request costs interval.
type bucket struct {
	interval int64 // nanoseconds to refill one request; 0 means the bucket is off
	capacity int64 // requests the full bucket holds
	span     int64 // capacity × interval: the debt of an empty bucket
}

// maxSpan bounds an empty bucket's debt (about 73 years) so that instants computed
// from it never overflow.
const maxSpan = int64(1) << 61

func newBucket(rate float64, burst time.Duration) bucket {
	if !(rate > 0) { // also NaN
		return bucket{}
	}
	interval := int64(1)
	switch f := math.Round(1e9 / rate); {
	case f >= float64(maxSpan):
		interval = maxSpan
	case f > 1:
		interval = int64(f)
	}
	if burst < 0 {
		burst = 0
	}
	// The epsilon keeps 0.1/s × 30 s (3.0000000000000004 in floating point) at 3.
	c := math.Ceil(rate*burst.Seconds() - 1e-9)
	capacity, most := int64(1), maxSpan/interval
	switch {
	case c >= float64(most): // also +Inf
		capacity = most
	case c > 1:
		capacity = int64(c)
	}
	return bucket{interval: interval, capacity: capacity, span: capacity * interval}
}

func (b bucket) on() bool { return b.interval > 0 }

// debt is how far from full the bucket whose full-again instant is tat stands at now.
// It is clamped to span so that a config with a smaller bucket cannot leave a key
// owing more than an empty bucket.
func (b bucket) debt(tat, now int64) int64 {
	d := tat - now
	switch {
	case d < 0:
		return 0
	case d > b.span:
		return b.span
	}
	return d
}

// allows reports whether one request fits a bucket with this debt.
func (b bucket) allows(debt int64) bool { return debt+b.interval <= b.span }

// view describes the bucket with this debt: whole requests left, the instant it is full
// again, and how long until one request fits.
func (b bucket) view(debt, now int64) view {
	v := view{limit: b.capacity, remaining: (b.span - debt) / b.interval, full: now + debt}
	if w := debt + b.interval - b.span; w > 0 {
		v.wait = w
	}
	return v
}
