package edge_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
)

func TestPrefersJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"":                                  false,
		"*/*":                               false,
		"application/json":                  true,
		"Application/JSON":                  true,
		"application/*":                     true,
		"text/html":                         false,
		"text/html, application/json":       false, // a tie goes to the page
		"application/json, text/html;q=0.9": true,
		"text/html;q=0.5, application/json": true,
		"application/json;q=0, */*":         false,
		"application/json;q=0.8, */*;q=0.9": false, // */* weighs text/html at 0.9
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": false, // a browser
		"application/json, text/plain, */*":                               true,  // axios
		"*/*;q=0.1, application/json;q=0.2":                               true,
		"application/json;q=abc":                                          false,
		"application/json;q=NaN":                                          false,
		"application/json; charset=utf-8; q=1":                            true,
		"application":                                                     false,
	}
	for accept, want := range cases {
		if got := edge.PrefersJSON(accept); got != want {
			t.Errorf("PrefersJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}

func FuzzPrefersJSON(f *testing.F) {
	f.Add("application/json;q=0.9, text/html;q=0.8")
	f.Add(";;,,/;q=")
	f.Fuzz(func(t *testing.T, accept string) {
		edge.PrefersJSON(accept) // must not panic
	})
}
