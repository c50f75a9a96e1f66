//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package transport

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE; the limit is unknown.
func raiseFileLimit() (uint64, bool) { return 0, false }
