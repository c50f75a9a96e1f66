package httpapi

import (
	"strconv"
	"testing"
)

// TestSmallIntsAreTheirDecimals holds the start-up table (substrings of one string) to
// strconv, at every index and just past it.
func TestSmallIntsAreTheirDecimals(t *testing.T) {
	for i := int64(-1); i <= int64(len(smallInts)); i++ {
		if got := smallItoa(i); got != strconv.FormatInt(i, 10) {
			t.Fatalf("smallItoa(%d) = %q", i, got)
		}
	}
}
