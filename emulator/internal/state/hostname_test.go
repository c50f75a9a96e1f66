package state

import (
	"strings"
	"testing"
)

func TestNormalizeHostname(t *testing.T) {
	tests := []struct {
		in, want string
		wildcard bool
		ok       bool
	}{
		{"shop.test", "shop.test", true, true},
		{"Shop.TEST.", "shop.test", true, true},
		{"*.shop.test", "*.shop.test", true, true},
		{"*.shop.test", "", false, false},
		{"a-b.c-d.example", "a-b.c-d.example", true, true},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", true, true},
		{"localhost", "", true, false},
		{"", "", true, false},
		{"*.", "", true, false},
		{"*.test", "", true, false},
		{"a.*.test", "", true, false},
		{"-a.test", "", true, false},
		{"a-.test", "", true, false},
		{"a..test", "", true, false},
		{"a_b.test", "", true, false},
		{"1.2.3.4", "", true, false},
		{"a.123", "", true, false},
		{strings.Repeat("a", 63) + ".test", strings.Repeat("a", 63) + ".test", true, true},
		{strings.Repeat("a", 64) + ".test", "", true, false},
		{strings.Repeat("a.", 126) + "test", "", true, false},
		{"shop.test/x", "", true, false},
		{"shöp.test", "", true, false},
	}
	for _, tt := range tests {
		got, ok := NormalizeHostname(tt.in, tt.wildcard)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeHostname(%q, %v) = %q, %v; want %q, %v", tt.in, tt.wildcard, got, ok, tt.want, tt.ok)
		}
	}
}

func TestApex(t *testing.T) {
	for in, want := range map[string]string{"shop.test": "shop.test", "www.shop.test": "shop.test", "*.shop.test": "shop.test", "a.b.shop.test": "shop.test"} {
		if got := Apex(in); got != want {
			t.Errorf("Apex(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzNormalizeHostname: a hostname that passes is stable under a second pass, has at
// most 253 characters and only letters, digits, hyphens and dots (and one leading "*.").
func FuzzNormalizeHostname(f *testing.F) {
	for _, s := range []string{"shop.test", "*.shop.test", "A.B.", "a..b", "-x.y", "x.1", "ü.test", strings.Repeat("a.", 130)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := NormalizeHostname(s, true)
		if !ok {
			return
		}
		if again, ok2 := NormalizeHostname(h, true); !ok2 || again != h {
			t.Fatalf("%q → %q → %q, %v", s, h, again, ok2)
		}
		if len(h) > 253 || strings.Trim(strings.TrimPrefix(h, "*."), "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
			t.Fatalf("%q passed as %q", s, h)
		}
		if !strings.Contains(strings.TrimPrefix(h, "*."), ".") {
			t.Fatalf("%q passed with one label", h)
		}
	})
}
