package fault_test

import (
	"net/http"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

func FuzzParseBodyMatch(f *testing.F) {
	for _, s := range []string{"target=production", "$.meta.branch=main", "files[0].path=/index.html", "a[1][2]", "", "=x", "a..b", "a[-1]", "n=3.0", "n=1e99999", "n={\"a\":[1,2e0]}", "n=3 x"} {
		f.Add(s, `{"target":"production","files":[{"path":"/index.html"}]}`)
	}
	f.Fuzz(func(t *testing.T, s, body string) {
		m, err := fault.ParseBodyMatch(s)
		if err != nil {
			return
		}
		m.Matches(body) // must not panic
		if m.String() != s {
			t.Fatalf("String() = %q, want %q", m.String(), s)
		}
	})
}

// One header name rule, RFC 9110's token, for a fault's match.headers, the headers a
// fault answers with, and the journal's header filters: a name one of them takes, the
// others take.
func TestHeaderNameRule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"X-Run", true},
		{"x-run", true},
		{"X-Foo!", true},
		{"X_Foo.Bar", true},
		{"X-#$%&'*+-.^_`|~", true},
		{"X Foo", false},
		{"X;Foo", false},
		{"X@Foo", false},
		{"X-Foo\x00", false},
		{"X-Fo\u00e9", false},
		{"X(Foo)", false},
		{`X"Foo"`, false},
		{"X/Foo", false},
		{"", false},
	} {
		inFault := (&fault.Spec{Match: fault.Match{Headers: map[string]string{tt.name: "*"}}, Status: 503}).Validate() == nil
		inAnswer := (&fault.Spec{Headers: map[string]string{tt.name: "1"}}).Validate() == nil
		_, jerr := journal.ParseHeaderMatch(tt.name + ":*")
		if inFault != tt.ok || inAnswer != tt.ok || (jerr == nil) != tt.ok || fault.ValidHeaderName(tt.name) != tt.ok {
			t.Errorf("%q: match.headers %v, answer headers %v, journal %v, want ok=%v", tt.name, inFault, inAnswer, jerr, tt.ok)
		}
	}
}

// The one header matcher: present, or present with a value matching the glob, names in
// any case, several values joined by ", " as the journal shows them; a fault and a
// journal query with the same header and glob select the same requests.
func TestHeaderMatch(t *testing.T) {
	t.Parallel()
	h := http.Header{"X-Run": {"ci-42"}, "X-Foo!": {"a"}, "Accept": {"text/html", "application/json"}}
	for _, tt := range []struct {
		name, glob string
		hasValue   bool
		want       bool
	}{
		{"x-run", "ci-*", true, true},
		{"X-RUN", "dev", true, false},
		{"X-Run", "", false, true},
		{"X-Other", "", false, false},
		{"x-foo!", "a", true, true},
		{"Accept", "*json", true, true},
		{"Accept", "text/html, application/json", true, true},
		{"Accept", "text/html", true, false},
	} {
		m, ok := fault.NewHeaderMatch(tt.name, tt.glob, tt.hasValue)
		if !ok {
			t.Fatalf("%q refused", tt.name)
		}
		if got := m.In(h); got != tt.want {
			t.Errorf("%s:%s In = %v, want %v", tt.name, tt.glob, got, tt.want)
		}
		// the journal keeps the same headers joined; its filter agrees
		e := journal.Entry{Method: "GET", Path: "/"}
		e.SetRequestHeaders(h)
		q := tt.name
		if tt.hasValue {
			q += ":" + tt.glob
		}
		jm, err := journal.ParseHeaderMatch(q)
		if err != nil {
			t.Fatal(err)
		}
		j := journal.New(1)
		j.Add(e)
		if got := j.Count(journal.Filter{Header: jm}) == 1; got != tt.want {
			t.Errorf("journal %q: %v, want %v", q, got, tt.want)
		}
		// and a fault
		glob := tt.glob
		if !tt.hasValue {
			glob = "*" // a fault's presence
		}
		s := fault.NewSet(nil)
		if _, err := s.Add(fault.Spec{Match: fault.Match{Headers: map[string]string{tt.name: glob}}, Status: 503}); err != nil {
			t.Fatal(err)
		}
		if _, got := s.Match(fault.Request{Method: "GET", Path: "/", Header: h}); got != tt.want {
			t.Errorf("fault %s:%s: %v, want %v", tt.name, tt.glob, got, tt.want)
		}
	}
	if _, ok := fault.NewHeaderMatch("X Foo", "", false); ok {
		t.Error("a name with a space accepted")
	}
}
