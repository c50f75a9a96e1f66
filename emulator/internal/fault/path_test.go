package fault_test

import (
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

func TestPathMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*", "", true},
		{"*", "/v1/deployments/dpl_1", true},
		{"", "", true},
		{"", "/", false},
		{"/v1/deployments", "/v1/deployments", true},
		{"/v1/deployments", "/v1/deployments/", false},
		{"/v1/deployments", "/V1/deployments", false},
		{"/v1/deployments*", "/v1/deployments", true},
		{"/v1/deployments*", "/v1/deployments/dpl_1/promote", true}, // `*` crosses '/'
		{"/v1/deployments*", "/v1/deploy", false},
		{"/v1/*/domains", "/v1/projects/prj_1/domains", true},
		{"/v1/*/domains", "/v1/projects/prj_1/domains/x", false}, // anchored at the end
		{"*/domains", "/v1/projects/prj_1/domains", true},
		{"/v1/*", "/v2/x", false}, // anchored at the start
		{"/v1/*s/*s", "/v1/projects/prj_1/domains", true},
		{"/a*b*c", "/abxbxc", true},
		{"/a*b*c", "/abxbxcx", false},
		{"/a**c", "/abc", true},
		{"*a*a*a*a*a*a*b", strings.Repeat("a", 200), false}, // no exponential backtracking
		{"/é*", "/éclair", true},
	}
	for _, tt := range tests {
		if got := fault.PathMatch(tt.pattern, tt.path); got != tt.want {
			t.Errorf("PathMatch(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func FuzzPathMatch(f *testing.F) {
	f.Add("/v1/deployments*", "/v1/deployments/dpl_1")
	f.Add("*", "")
	f.Add("/a*b*c", "/abxbxc")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		got := fault.PathMatch(pattern, path) // must not panic
		if !fault.PathMatch("*", path) {
			t.Fatalf("* does not match %q", path)
		}
		if !strings.Contains(pattern, "*") && got != (pattern == path) {
			t.Fatalf("PathMatch(%q, %q) = %v for a pattern without *", pattern, path, got)
		}
		if !fault.PathMatch(path, path) {
			t.Fatalf("%q does not match itself", path)
		}
		// Any part of a path replaced by `*` still matches it.
		i, j := len(pattern)%(len(path)+1), len(path)
		if j > 0 {
			j = i + len(pattern)/3%(len(path)-i+1)
		}
		if p := path[:i] + "*" + path[j:]; !fault.PathMatch(p, path) {
			t.Fatalf("%q does not match %q", p, path)
		}
	})
}
