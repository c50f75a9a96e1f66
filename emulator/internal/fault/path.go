package fault

import "strings"

// PathMatch reports whether path matches pattern as a whole, where each `*` in pattern
// matches any run of bytes, '/' included, and every other byte matches itself
// (case-sensitively). "*" matches every path and a pattern without `*` only itself.
//
// It runs in O(len(pattern) × len(path)) time at worst, without recursion or
// allocation, so user patterns cannot blow it up.
func PathMatch(pattern, path string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == path
	}
	p, s := 0, 0
	star, mark := -1, 0 // the last `*` seen in pattern, and where in path it began matching
	for s < len(path) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, s
			p++
		case p < len(pattern) && pattern[p] == path[s]:
			p++
			s++
		case star >= 0:
			// Let the last `*` swallow one more byte and retry the rest after it.
			mark++
			p, s = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
