package fault

import "strings"

// MaxGlob bounds a `*` pattern, in bytes: a fault's match.path and match.host, and the
// journal's path and header filters (queries and awaits). Within it, PathMatch needs no
// allocation.
const MaxGlob = 1024

// PathMatch reports whether path matches pattern as a whole, where each `*` in pattern
// matches any run of bytes, '/' included, and every other byte matches itself
// (case-sensitively). "*" matches every path and a pattern without `*` only itself.
//
// It is the one glob of hostemu (faults, journal queries, awaits), and it runs in
// O(len(pattern) + len(path)) time, whatever either holds: the pattern is a prefix,
// literals and a suffix between its stars; the prefix and suffix are compared in
// place, and each literal is found leftmost after the previous one by Knuth–Morris–
// Pratt, which reads each byte of path at most twice. Taking the leftmost occurrence
// of each literal never loses a match, so nothing is ever retried (the two-pointer
// star matcher this replaces retried the rest of the pattern at every byte, which a
// pattern such as `*a…a*b` made quadratic). No recursion, and no allocation for
// patterns of up to MaxGlob bytes.
func PathMatch(pattern, path string) bool {
	ok, _ := globMatch(pattern, path)
	return ok
}

// globMatch is PathMatch, also returning the byte comparisons it made: at most
// 2×(len(pattern)+len(path)), a bound the tests hold it to.
func globMatch(pattern, s string) (ok bool, steps int) {
	first := strings.IndexByte(pattern, '*')
	if first < 0 {
		return pattern == s, min(len(pattern), len(s))
	}
	last := strings.LastIndexByte(pattern, '*')
	prefix, suffix := pattern[:first], pattern[last+1:]
	steps = len(prefix) + len(suffix)
	if len(prefix)+len(suffix) > len(s) || s[:len(prefix)] != prefix || s[len(s)-len(suffix):] != suffix {
		return false, steps
	}
	text := s[len(prefix) : len(s)-len(suffix)]
	middle := ""
	if first < last {
		middle = pattern[first+1 : last]
	}
	for middle != "" {
		lit, rest, _ := strings.Cut(middle, "*")
		middle = rest
		if lit == "" {
			continue // `**`
		}
		at, n := indexKMP(text, lit)
		steps += n
		if at < 0 {
			return false, steps
		}
		text = text[at+len(lit):]
	}
	return true, steps
}

// indexKMP is strings.Index(text, lit) by Knuth–Morris–Pratt, in O(len(text)+len(lit))
// comparisons whatever the input (strings.Index's fallback for long literals is
// Rabin–Karp, linear only in expectation), and the comparisons it made.
func indexKMP(text, lit string) (at, steps int) {
	var buf [MaxGlob]int32
	fail := buf[:0]
	if len(lit) > MaxGlob {
		fail = make([]int32, 0, len(lit))
	}
	fail = fail[:len(lit)]
	// fail[i]: the length of the longest proper prefix of lit[:i+1] that is also its
	// suffix, i.e. where to resume after a mismatch past lit[i]
	fail[0] = 0
	k := 0
	for i := 1; i < len(lit); i++ {
		for k > 0 && lit[i] != lit[k] {
			k = int(fail[k-1])
			steps++
		}
		steps++
		if lit[i] == lit[k] {
			k++
		}
		fail[i] = int32(k)
	}
	k = 0
	for i := 0; i < len(text); i++ {
		for k > 0 && text[i] != lit[k] {
			k = int(fail[k-1])
			steps++
		}
		steps++
		if text[i] == lit[k] {
			k++
		}
		if k == len(lit) {
			return i - len(lit) + 1, steps
		}
	}
	return -1, steps
}
