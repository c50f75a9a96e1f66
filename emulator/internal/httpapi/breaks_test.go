package httpapi

import (
	"slices"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// Every break a fault may name has its type in the registry, and no other.
func TestBreakRegistry(t *testing.T) {
	var keys []string
	for k := range breaks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Sorted(slices.Values(fault.Breaks))
	if !slices.Equal(keys, want) {
		t.Fatalf("registry %v, fault.Breaks %v", keys, want)
	}
}
