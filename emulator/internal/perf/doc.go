// Package perf holds the speed bar's measurements; it has no code of its own beyond its
// tests, the reference handlers (package bare, served by the baregin binary) and a load
// generator (loadgen, used where wrk is not installed). Each test is skipped unless
// HOSTEMU_PERF is set, and asserts nothing about speed:
//
//	HOSTEMU_PERF=1 go test -run TestHotPaths -v ./emulator/internal/perf/       # every hot path in process, against package bare
//	HOSTEMU_PERF=1 go test -run TestBinaryHotPaths -v ./emulator/internal/perf/ # the built binary against baregin, pinned, CPU per request
//	HOSTEMU_PERF=1 go test -run TestBinaryVsGin -v ./emulator/internal/perf/    # the GET chain alone (wrk or loadgen)
//	HOSTEMU_PERF=1 go test -run TestBinaryBundle -v ./emulator/internal/perf/   # replay vs fixtures, PUT bundle vs PUT state (100,000 deployments)
//
// Rounds alternate between the two sides so that the shared machine's load hits both
// alike; HOSTEMU_PERF_ROUNDS sets their number, HOSTEMU_PERF_ONLY a regexp of the
// paths. The binary comparisons need taskset (Linux).
package perf
