package ratelimit_test

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// step makes n requests of one key at t0+at and checks the last decision.
type step struct {
	at   time.Duration
	n    int // 0 means 1
	want ratelimit.Decision
}

func allowed(limit, remaining int, reset time.Duration) ratelimit.Decision {
	return ratelimit.Decision{Allowed: true, Limit: limit, Remaining: remaining, Reset: at(reset)}
}

func refused(limit int, reset, retry time.Duration) ratelimit.Decision {
	return ratelimit.Decision{Limit: limit, Reset: at(reset), RetryAfter: retry}
}

func runSteps(t *testing.T, l *ratelimit.Limiter, do func(*ratelimit.Limiter, string, time.Time) ratelimit.Decision, steps []step) {
	t.Helper()
	for i, s := range steps {
		var got ratelimit.Decision
		for range max(s.n, 1) {
			got = do(l, "k", at(s.at))
		}
		if got != s.want {
			t.Fatalf("step %d (at %v ×%d):\n got %+v\nwant %+v", i, s.at, max(s.n, 1), got, s.want)
		}
	}
}

func token(l *ratelimit.Limiter, k string, now time.Time) ratelimit.Decision { return l.Token(k, now) }
func ip(l *ratelimit.Limiter, k string, now time.Time) ratelimit.Decision    { return l.IP(k, now) }

func TestToken(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name  string
		cfg   ratelimit.Config
		steps []step
	}{
		{
			name: "burst of capacity then refusal",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 10, Burst: time.Second},
			steps: []step{
				{at: 0, want: allowed(10, 9, time.Second)}, // full again 100ms later, rounded up
				{at: 0, n: 9, want: allowed(10, 0, time.Second)},
				{at: 0, want: refused(10, time.Second, 100*ms)},
				{at: 0, want: refused(10, time.Second, 100*ms)}, // refusals spend nothing
			},
		},
		{
			name: "refill over time",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 10, Burst: time.Second},
			steps: []step{
				{at: 0, n: 10, want: allowed(10, 0, time.Second)},
				{at: 250 * ms, want: allowed(10, 1, 2*time.Second)}, // 2.5 refilled: full at 1.1s
				{at: 250 * ms, want: allowed(10, 0, 2*time.Second)},
				{at: 250 * ms, want: refused(10, 2*time.Second, 50*ms)},
				{at: 300 * ms, want: allowed(10, 0, 2*time.Second)},
				{at: 10 * time.Second, want: allowed(10, 9, 11*time.Second)},
			},
		},
		{
			name: "minute window refuses with tokens left in the bucket",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 1000, PerTokenPerMinute: 5000, Burst: 30 * time.Second},
			steps: []step{
				{at: 0, want: allowed(5000, 4999, time.Minute)},
				{at: 0, n: 4999, want: allowed(5000, 0, time.Minute)},
				{at: 0, want: refused(5000, time.Minute, time.Minute)},
				{at: 59900 * ms, want: refused(5000, time.Minute, 100*ms)},
				{at: time.Minute, want: allowed(5000, 4999, 2*time.Minute)},
			},
		},
		{
			name: "window opens at the key's first request, not the clock minute",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 2, Burst: time.Second},
			steps: []step{
				{at: 45 * time.Second, want: allowed(2, 1, 105*time.Second)},
				{at: 70 * time.Second, want: allowed(2, 0, 105*time.Second)},
				{at: 104 * time.Second, want: refused(2, 105*time.Second, time.Second)},
				{at: 105 * time.Second, want: allowed(2, 1, 165*time.Second)},
			},
		},
		{
			name: "headers: the bucket when it is nearer",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, Burst: 30 * time.Second},
			steps: []step{
				{at: 0, want: allowed(3000, 2999, time.Second)},
				{at: 0, n: 2999, want: allowed(3000, 0, 30*time.Second)},
				{at: 0, want: refused(3000, 30*time.Second, 10*ms)},
			},
		},
		{
			name: "headers: the window when it is nearer",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 1, PerTokenPerMinute: 3, Burst: 5 * time.Second},
			steps: []step{
				{at: 0, want: allowed(3, 2, time.Minute)},
			},
		},
		{
			name: "headers: the bucket on a tie",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 1, PerTokenPerMinute: 5, Burst: 5 * time.Second},
			steps: []step{
				{at: 0, want: allowed(5, 4, time.Second)},
				{at: 0, n: 4, want: allowed(5, 0, 5*time.Second)},
				{at: 0, want: refused(5, 5*time.Second, time.Minute)}, // wait for the window, the longer
			},
		},
		{
			name: "burst 0s holds exactly one request",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 10},
			steps: []step{
				{at: 0, want: allowed(1, 0, time.Second)},
				{at: 0, want: refused(1, time.Second, 100*ms)},
				{at: 100 * ms, want: allowed(1, 0, time.Second)},
				{at: 150 * ms, want: refused(1, time.Second, 50*ms)},
			},
		},
		{
			name: "disabled: never refuses, spends nothing over the limit",
			cfg:  ratelimit.Config{PerTokenPerSecond: 1},
			steps: []step{
				{at: 0, want: allowed(1, 0, time.Second)},
				{at: 0, n: 5, want: allowed(1, 0, time.Second)},
				{at: time.Second, want: allowed(1, 0, 2*time.Second)},
			},
		},
		{
			name: "window only",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerMinute: 2},
			steps: []step{
				{at: 0, n: 2, want: allowed(2, 0, time.Minute)},
				{at: 30 * time.Second, want: refused(2, time.Minute, 30*time.Second)},
			},
		},
		{
			name: "nothing configured",
			cfg:  ratelimit.Config{Enabled: true},
			steps: []step{
				{at: 0, n: 100, want: ratelimit.Decision{Allowed: true}},
			},
		},
		{
			name: "per-IP settings do not apply to tokens",
			cfg:  ratelimit.Config{Enabled: true, PerIPPerSecond: 1},
			steps: []step{
				{at: 0, n: 100, want: ratelimit.Decision{Allowed: true}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runSteps(t, ratelimit.New(tt.cfg), token, tt.steps)
		})
	}
}

func TestIP(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 1, PerIPPerSecond: 10, Burst: 30 * time.Second}
	l := ratelimit.New(cfg)
	runSteps(t, l, ip, []step{
		{at: 0, want: allowed(300, 299, time.Second)}, // no per-minute window per IP
		{at: 0, n: 299, want: allowed(300, 0, 30*time.Second)},
		{at: 0, want: refused(300, 30*time.Second, 100*time.Millisecond)},
	})
	if d := l.IP("cipher|k", t0); !d.Allowed || d.Remaining != 299 {
		t.Errorf("another IP key shares the bucket: %+v", d)
	}
	if d := l.Token("k", t0); !d.Allowed || d.Limit != 1 {
		t.Errorf("a token with the same key shares the IP bucket: %+v", d)
	}
}

func TestCapacity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rate  float64
		burst time.Duration
		want  int
	}{
		{100, 30 * time.Second, 3000},
		{10, 30 * time.Second, 300},
		{0.1, 30 * time.Second, 3}, // 3.0000000000000004 in floating point
		{2.5, time.Second, 3},
		{0.5, 3 * time.Second, 2},
		{3, time.Second, 3},
		{10, 0, 1},
		{10, -time.Second, 1},
		{0.001, time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%g/s×%v", tt.rate, tt.burst), func(t *testing.T) {
			t.Parallel()
			l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: tt.rate, Burst: tt.burst})
			if d := l.Token("k", t0); d.Limit != tt.want || d.Remaining != tt.want-1 {
				t.Errorf("Limit %d Remaining %d, want %d and %d", d.Limit, d.Remaining, tt.want, tt.want-1)
			}
		})
	}
}

func TestExtremeConfigs(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{1e-30, 1e30} {
		for _, burst := range []time.Duration{0, time.Second, 1<<63 - 1} {
			l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: rate, PerIPPerSecond: rate, Burst: burst})
			for range 3 {
				for _, d := range []ratelimit.Decision{l.Token("k", t0), l.IP("k", t0), l.Exhausted("k", t0, false)} {
					if d.Limit < 1 || d.Remaining < 0 || d.Remaining > d.Limit || d.Reset.Before(t0) || d.RetryAfter < 0 {
						t.Errorf("rate %g burst %v: %+v", rate, burst, d)
					}
				}
			}
		}
	}
}

func TestExhausted(t *testing.T) {
	t.Parallel()
	std := ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, PerIPPerSecond: 10, Burst: 30 * time.Second}
	tests := []struct {
		name   string
		cfg    ratelimit.Config
		before int // Token requests spent first, at t0
		perIP  bool
		want   ratelimit.Decision
	}{
		{name: "fresh token: an empty bucket", cfg: std, want: refused(3000, 30*time.Second, 10*time.Millisecond)},
		{name: "fresh IP", cfg: std, perIP: true, want: refused(300, 30*time.Second, 100*time.Millisecond)},
		{
			name:   "window nearer",
			cfg:    ratelimit.Config{Enabled: true, PerTokenPerSecond: 1000, PerTokenPerMinute: 5000, Burst: 30 * time.Second},
			before: 4990,
			want:   refused(5000, time.Minute, time.Minute),
		},
		{
			name: "window nearer on a fresh key: as if it opened now",
			cfg:  ratelimit.Config{Enabled: true, PerTokenPerSecond: 1000, PerTokenPerMinute: 100, Burst: 30 * time.Second},
			want: refused(100, time.Minute, time.Minute),
		},
		{
			name:   "bucket nearer but the window really exhausted",
			cfg:    ratelimit.Config{Enabled: true, PerTokenPerSecond: 1, PerTokenPerMinute: 3, Burst: 3 * time.Second},
			before: 3,
			want:   refused(3, 3*time.Second, time.Minute),
		},
		{name: "disabled limits still answer", cfg: ratelimit.Config{PerTokenPerSecond: 100, Burst: 30 * time.Second}, want: refused(3000, 30*time.Second, 10*time.Millisecond)},
		{name: "no limits configured", cfg: ratelimit.Config{Enabled: true}, want: refused(0, time.Second, time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := ratelimit.New(tt.cfg)
			for range tt.before {
				l.Token("k", t0)
			}
			var probe ratelimit.Decision
			if tt.perIP {
				probe = l.IP("probe", t0)
			} else {
				probe = l.Token("probe", t0)
			}
			if got := l.Exhausted("k", t0, tt.perIP); got != tt.want {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
			// Exhausted spends nothing: k now answers as an untouched key with the same history.
			var got ratelimit.Decision
			if tt.perIP {
				got = l.IP("k", t0)
			} else {
				got = l.Token("k", t0)
			}
			if tt.before == 0 && got != probe {
				t.Errorf("after Exhausted: got %+v, want %+v", got, probe)
			}
		})
	}
}

func TestSetConfigKeepsCounters(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{Enabled: true, PerTokenPerSecond: 10, Burst: time.Second}
	l := ratelimit.New(cfg)
	runSteps(t, l, token, []step{{at: 0, n: 10, want: allowed(10, 0, time.Second)}})
	cfg.Burst = 2 * time.Second
	l.SetConfig(cfg)
	if got := l.Config(); !reflect.DeepEqual(got, cfg) {
		t.Fatalf("Config() = %+v, want %+v", got, cfg)
	}
	runSteps(t, l, token, []step{{at: 0, want: allowed(20, 9, 2*time.Second)}})
	cfg.Enabled = false
	l.SetConfig(cfg)
	runSteps(t, l, token, []step{{at: 0, n: 9, want: allowed(20, 0, 2*time.Second)}, {at: 0, want: allowed(20, 0, 2*time.Second)}})
	cfg.Enabled = true
	cfg.Burst = 0 // a smaller bucket: the debt is capped at empty, not carried over
	l.SetConfig(cfg)
	runSteps(t, l, token, []step{{at: 0, want: refused(1, time.Second, 100*time.Millisecond)}, {at: 100 * time.Millisecond, want: allowed(1, 0, time.Second)}})
}

func TestReset(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: 10, PerTokenPerMinute: 10, PerIPPerSecond: 1, Burst: time.Second})
	runSteps(t, l, token, []step{{at: 0, n: 10, want: allowed(10, 0, time.Second)}, {at: 0, want: refused(10, time.Second, time.Minute)}})
	runSteps(t, l, ip, []step{{at: 0, want: allowed(1, 0, time.Second)}, {at: 0, want: refused(1, time.Second, time.Second)}})
	l.Reset()
	if n := ratelimit.KeyCount(l); n != 0 {
		t.Fatalf("%d keys after Reset", n)
	}
	runSteps(t, l, token, []step{{at: 0, want: allowed(10, 9, time.Second)}})
	runSteps(t, l, ip, []step{{at: 0, want: allowed(1, 0, time.Second)}})
}

func TestForgetsIdleKeys(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, PerIPPerSecond: 10, Burst: 30 * time.Second})
	const n = 100_000
	for i := range n {
		now := at(time.Duration(i) * time.Second)
		if d := l.IP(fmt.Sprintf("hosting|10.%d.%d.%d", i>>16&255, i>>8&255, i&255), now); d.Remaining != 299 {
			t.Fatalf("request %d: %+v", i, d)
		}
		if d := l.Token(fmt.Sprint("tok", i), now); d.Remaining != 2999 {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	// Per IP, only the newest key is still recovering; per token, the last minute's 60.
	if got := ratelimit.KeyCount(l); got > 500 {
		t.Errorf("%d keys tracked after %d distinct keys, want a few hundred at most", got, 2*n)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	cfg := ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, PerIPPerSecond: 10, Burst: 30 * time.Second}
	l := ratelimit.New(cfg)
	var tokenOK, ipOK atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if l.Token("shared", t0).Allowed {
					tokenOK.Add(1)
				}
				if l.IP("hosting|192.0.2.1", t0).Allowed {
					ipOK.Add(1)
				}
				l.Token(fmt.Sprint(g, i), t0)
				l.Exhausted("shared", t0, g%2 == 0)
				if i%100 == 0 {
					l.SetConfig(l.Config())
				}
			}
		})
	}
	wg.Wait()
	if tokenOK.Load() != 3000 || ipOK.Load() != 300 {
		t.Errorf("allowed %d token and %d IP requests, want 3000 and 300", tokenOK.Load(), ipOK.Load())
	}
}

func BenchmarkTokenAllow(b *testing.B) {
	l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, PerTokenPerMinute: 1 << 40, Burst: 30 * time.Second})
	const key = "3f9a1c0e5b7d2468ace013579bdf2468ace013579bdf2468ace013579bdf2468"
	l.Token(key, t0)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(10 * time.Millisecond)
		if !l.Token(key, now).Allowed {
			b.Fatal("refused")
		}
	}
}

func BenchmarkTokenParallel(b *testing.B) {
	l := ratelimit.New(ratelimit.Config{Enabled: false, PerTokenPerSecond: 100, PerTokenPerMinute: 5000, Burst: 30 * time.Second})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Token("k", t0)
		}
	})
}

// PerScope gives the tokens of one scope their own numbers (issue 25: rate limits for
// the deploy token only); other scopes keep the per-token ones, and Exhausted describes
// the scope's constraint.
func TestPerScope(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(ratelimit.Config{Enabled: true, PerTokenPerSecond: 100, Burst: time.Second,
		PerScope: map[string]ratelimit.ScopeLimits{"deploy": {PerSecond: 2}}})
	for i := range 2 {
		if d := l.TokenOf("deploy", "d", at(0)); !d.Allowed || d.Limit != 2 {
			t.Fatalf("deploy request %d: %+v", i, d)
		}
	}
	if d := l.TokenOf("deploy", "d", at(0)); d.Allowed {
		t.Fatalf("third deploy request in a second allowed: %+v", d)
	}
	for i := range 50 {
		if d := l.TokenOf("read", "r", at(0)); !d.Allowed || d.Limit != 100 {
			t.Fatalf("read request %d: %+v", i, d)
		}
	}
	if d := l.ExhaustedOf("deploy", "d", at(0), false); d.Limit != 2 {
		t.Errorf("exhausted deploy: %+v", d)
	}
}
