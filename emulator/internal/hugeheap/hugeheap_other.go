//go:build !linux

package hugeheap

func reserve(uint64) bool { return false }

func unadvise() {}
