// Package perf holds the speed bar's measurement: the built hostemu binary against a
// bare gin binary (baregin) serving the same bytes, each pinned to one core, in
// interleaved wrk rounds. It has no code of its own beyond its test; run it with
//
//	HOSTEMU_PERF=1 go test -run TestBinaryVsGin -v ./emulator/internal/perf/
//
// (wrk and taskset on the PATH; HOSTEMU_PERF_ROUNDS sets the rounds, 7 by default).
package perf
