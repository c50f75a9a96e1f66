package fault

import (
	"strings"
	"testing"
)

// The glob's work is linear in the pattern and the path, whatever they hold: the
// two-pointer matcher it replaced made 2 million comparisons for `*a…a*b` against one
// journaled path, and 0.46 s for a query over 1,000 of them.
func TestGlobWorkIsLinear(t *testing.T) {
	t.Parallel()
	run := strings.Repeat("a", 999)
	hostile := strings.Repeat(run+"c", 3)[:2048]
	tests := []struct{ pattern, path string }{
		{"*" + run + "a*b", hostile},
		{"*" + run + "a*b", strings.Repeat("a", 2048)},
		{"*" + strings.Repeat("ab", 500) + "*", strings.Repeat("ab", 1000) + "c"},
		{strings.Repeat("*a", 512), strings.Repeat("a", 511) + strings.Repeat("b", 1500)},
		{"*" + strings.Repeat("aab", 300) + "*x", strings.Repeat("aaba", 600)},
		{"/v1/*/*/*/*/*/z", "/v1/" + strings.Repeat("y/", 1000)},
		{"*" + strings.Repeat("a", 2000) + "*", strings.Repeat("a", 4000)}, // beyond MaxGlob: allocates, still linear
	}
	for _, tt := range tests {
		ok, steps := globMatch(tt.pattern, tt.path)
		if bound := 2 * (len(tt.pattern) + len(tt.path)); steps > bound {
			t.Errorf("pattern of %d bytes on a path of %d: %d comparisons, over %d", len(tt.pattern), len(tt.path), steps, bound)
		}
		if ok != naiveMatch(tt.pattern, tt.path) {
			t.Errorf("pattern of %d bytes on a path of %d: %v, the definition says %v", len(tt.pattern), len(tt.path), ok, !ok)
		}
	}
}

// A glob within MaxGlob costs no allocation (faults match on every request).
func TestGlobAllocatesNothing(t *testing.T) {
	pattern := "/v1/*/deploy*ments*" + strings.Repeat("x", MaxGlob-30) + "*"
	path := "/v1/projects/prj_1/deployments/" + strings.Repeat("x", 2000)
	if n := testing.AllocsPerRun(100, func() { PathMatch(pattern, path) }); n != 0 {
		t.Errorf("PathMatch allocates %v times", n)
	}
}

// naiveMatch is the glob's definition, by dynamic programming over every (pattern,
// path) prefix pair: O(len(pattern) × len(path)), tests only.
func naiveMatch(pattern, s string) bool {
	// row[i]: pattern[:p] matches s[:i]
	row := make([]bool, len(s)+1)
	row[0] = true
	for p := range len(pattern) {
		next := make([]bool, len(s)+1)
		if pattern[p] == '*' {
			next[0] = row[0]
			for i := 1; i <= len(s); i++ {
				next[i] = row[i] || next[i-1]
			}
		} else {
			for i := 1; i <= len(s); i++ {
				next[i] = row[i-1] && pattern[p] == s[i-1]
			}
		}
		row = next
	}
	return row[len(s)]
}

// FuzzGlobAgainstDefinition: the linear glob agrees with the definition, within its
// bound of work.
func FuzzGlobAgainstDefinition(f *testing.F) {
	f.Add("/a*b*c", "/abxbxc")
	f.Add("*aab*ab", "aabaabab")
	f.Add("a**a", "aa")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 64 || len(path) > 256 {
			return
		}
		ok, steps := globMatch(pattern, path)
		if want := naiveMatch(pattern, path); ok != want {
			t.Fatalf("globMatch(%q, %q) = %v, want %v", pattern, path, ok, want)
		}
		if bound := 2 * (len(pattern) + len(path)); steps > bound {
			t.Fatalf("globMatch(%q, %q): %d comparisons, over %d", pattern, path, steps, bound)
		}
	})
}
