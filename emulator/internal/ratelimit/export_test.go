package ratelimit

// KeyCount is how many keys l tracks, for tests of forgetting.
func KeyCount(l *Limiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tokens) + len(l.ips)
}
