package scenario

import "testing"

func TestIsJSONNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"0": true, "-0": true, "3": true, "1.10": true, "1e400": true, "-2.5E-3": true,
		"100000000000000000001": true, "0.3e+1": true,
		"": false, "-": false, "01": false, "+5": false, ".5": false, "5.": false,
		"1e": false, "1e+": false, "0x1F": false, " 1": false, "1 ": false, "1 2": false,
		".inf": false, "NaN": false, "\"1\"": false, "[1]": false, "-a": false, "1-": false,
	} {
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
