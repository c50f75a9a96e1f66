package testkit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// BenchmarkStart measures what a test pays for its own emulator: Start with the
// defaults (embedded fixtures and scenarios, manual clock), then the shutdown at the
// test's end. It reports the median too, which one slow GC cycle does not move.
func BenchmarkStart(b *testing.B) {
	b.ReportAllocs()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		t := exampleT()
		testkit.Start(t)
		t.finish()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/start")
}
