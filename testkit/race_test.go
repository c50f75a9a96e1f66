//go:build race

package testkit_test

// raceEnabled says this test binary was built with -race: a child go test is built the
// same way, so that it reuses the build cache.
const raceEnabled = true
