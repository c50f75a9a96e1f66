//go:build !race

package testkit_test

const raceEnabled = false
