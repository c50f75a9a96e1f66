//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package transport

import "syscall"

// raiseFileLimit raises the soft limit of open files to the hard limit (Go does it too
// at start on most systems; this makes it explicit) and returns the soft limit then.
func raiseFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	if r.Cur < r.Max {
		raised := r
		raised.Cur = r.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			r = raised
		}
	}
	return uint64(r.Cur), true
}
