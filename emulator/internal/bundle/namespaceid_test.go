package bundle

import (
	"regexp"
	"strings"
	"testing"
)

// TestNamespaceIDIsItsPattern holds the hand-written check to the pattern it replaced
// (a regexp compiled at every start of the binary).
func TestNamespaceIDIsItsPattern(t *testing.T) {
	re := regexp.MustCompile(`^ns_[a-z0-9]{1,40}$`)
	cases := []string{"", "ns_", "ns_a", "ns_0", "ns_abc123", "NS_abc", "ns_ABC", "ns_a-b", "ns_a b", "xns_a", "ns_a\n",
		"ns_" + strings.Repeat("a", 40), "ns_" + strings.Repeat("a", 41), "ns_é", "ns__", "ns_a/", "ns_\x00"}
	for _, s := range cases {
		if got, want := namespaceID(s), re.MatchString(s); got != want {
			t.Errorf("namespaceID(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}

func FuzzNamespaceID(f *testing.F) {
	re := regexp.MustCompile(`^ns_[a-z0-9]{1,40}$`)
	for _, s := range []string{"ns_a", "ns_", "ns_" + strings.Repeat("z", 41), "ns_Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := namespaceID(s), re.MatchString(s); got != want {
			t.Fatalf("namespaceID(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
