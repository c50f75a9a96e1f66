package httpapi

import (
	"strconv"
	"testing"
)

// TestSmallIntsAreTheirDecimals holds the table made on first use (substrings of one string) to
// strconv, at every index and just past it.
func TestSmallIntsAreTheirDecimals(t *testing.T) {
	for i := int64(-1); i <= int64(len(smallInts)); i++ {
		if got := smallItoas(i); len(got) != 1 || got[0] != strconv.FormatInt(i, 10) {
			t.Fatalf("smallItoas(%d) = %q", i, got)
		}
	}
}
