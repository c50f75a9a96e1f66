// Package ratelimit decides whether a caller may make one more request and what its
// X-RateLimit-* headers say, on the emulator clock.
//
// Every method takes the instant to decide at, so a manual clock makes limits exact and
// tests need no sleeps. Nothing here knows about HTTP: the caller turns a [Decision] into
// headers and a 429.
//
// Per token (or cipher API key) two constraints apply together:
//
//   - a token bucket refilled at Config.PerTokenPerSecond holding at most Config.Burst
//     worth of that rate: its capacity is ceil(rate × burst seconds), and at least 1, so
//     Burst 0s gives a capacity of exactly 1, i.e. no bursting: one request per 1/rate
//     seconds;
//   - a fixed 60 s window admitting Config.PerTokenPerMinute requests. A window opens at
//     the first request a key makes while no window is open, and closes 60 s later; it
//     is not aligned to clock minutes, so a key behaves the same whatever the clock's
//     phase.
//
// Per client IP and service, one bucket at Config.PerIPPerSecond with the same burst
// rule. A rate of 0 (or less) turns that bucket off, a per-minute limit of 0 (or less)
// turns the window off; with none on, decisions carry Limit 0 and the caller sends no
// headers.
package ratelimit
